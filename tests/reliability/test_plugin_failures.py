"""A plugin that fails — at import, config, start, stop, in middleware, in an event handler.

Each failure alone, beside a real memory backend: the host starts, memory still saves and
reads, and the failure is reported with the failing plugin's name where an operator looks
(``host.plugins()``, the clear's result rows, the log). One broken third-party plugin must
never cost a user their conversation.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest
from aalis_api_memory import ClearRequest, ClearType, memory
from aalis_schema_message import Message
from structlog.testing import capture_logs

from aalis_core import Host, Plugin, hookimpl

pytestmark = pytest.mark.timeout(60)


def _inmemory() -> Any:
    from aalis_plugin_memory_inmemory import MemoryInmemory

    return MemoryInmemory()


def _config(tmp_path: Path, **plugins: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": "memory-inmemory"}},
    }
    if plugins:
        config["plugins"] = plugins
    return config


async def _memory_works(host: Host, session: str = "s1") -> None:
    """The part of the system a broken plugin must not take down."""
    handle = host.capability(memory)
    assert handle.present, "memory is absent beside a broken plugin"
    mem = handle.use
    await mem.save_message(session, Message(role="user", content="still here", timestamp=1))
    await mem.save_message(session, Message(role="assistant", content="me too", timestamp=2))
    assert [m.content for m in await mem.get_history(session)] == ["still here", "me too"]


def _info(host: Host, name: str) -> Any:
    return {info.name: info for info in host.plugins()}[name]


def _logged_for(logs: list[dict[str, Any]], plugin: str) -> list[dict[str, Any]]:
    return [
        e for e in logs if e.get("plugin") == plugin and e.get("log_level") in ("error", "warning")
    ]


# -- import ---------------------------------------------------------------------------------


def _install_broken_distribution(site: Path) -> None:
    """A real installed distribution whose plugin module raises when imported."""
    (site / "aalis_rel_broken_import.py").write_text(
        "raise RuntimeError('this plugin module is broken on purpose')\n", encoding="utf-8"
    )
    dist = site / "aalis_rel_broken_import-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: aalis-rel-broken-import\nVersion: 0.1.0\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [aalis.plugins]
            rel-broken-import = aalis_rel_broken_import:Broken
            """
        ),
        encoding="utf-8",
    )
    (dist / "RECORD").write_text("", encoding="utf-8")


async def test_a_plugin_failing_at_import_is_reported_and_the_rest_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install_broken_distribution(site)
    monkeypatch.syspath_prepend(str(site))
    # Only the broken entry point is discovered; the backend comes in-process.
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "rel-broken-import")
    with capture_logs():
        host = Host(_config(tmp_path), [_inmemory()])
    async with host:
        info = _info(host, "rel-broken-import")
        assert info.state == "error"
        assert "import failed" in (info.error or "")
        assert "broken on purpose" in (info.error or "")
        assert _info(host, "memory-inmemory").state == "active"
        await _memory_works(host)


# -- config ---------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _ExplodingConfig:
    level: int = 1

    def __attrs_post_init__(self) -> None:
        raise RuntimeError("config class bug")


class _BrokenConfigPlugin(Plugin):
    name = "rel-broken-config"
    Config = _ExplodingConfig


async def test_a_plugin_whose_config_class_raises_is_reported_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    """A bug in a plugin's Config class (not a user's invalid value) is that plugin's error."""
    with capture_logs():
        host = Host(_config(tmp_path), [_inmemory(), _BrokenConfigPlugin()], discover=False)
    async with host:
        info = _info(host, "rel-broken-config")
        assert info.state == "error"
        assert "config class bug" in (info.error or "")
        await _memory_works(host)


@attrs.frozen(kw_only=True)
class _StrictConfig:
    level: int = attrs.field(default=1, validator=attrs.validators.instance_of(int))


class _StrictConfigPlugin(Plugin):
    name = "rel-strict-config"
    Config = _StrictConfig


async def test_an_invalid_value_in_a_plugin_table_fails_that_plugin_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    """A user's invalid value in one plugin's table puts that plugin in ``error`` naming the
    table and key; memory (and every command not needing that plugin) still works."""
    config = _config(tmp_path, **{"rel-strict-config": {"level": "high"}})
    host = Host(config, [_inmemory(), _StrictConfigPlugin()], discover=False)
    info = _info(host, "rel-strict-config")
    assert info.state == "error"
    assert "plugins.rel-strict-config" in (info.error or "")
    assert "'level'" in (info.error or "")
    async with host:
        await _memory_works(host)


# -- start and stop -------------------------------------------------------------------------


class _FailsAtStart(Plugin):
    name = "rel-fails-at-start"
    uses = {"memory": memory}

    def __init__(self) -> None:
        self.stopped = False

    async def start(self, ctx: Any) -> None:
        raise RuntimeError("cannot start on purpose")

    async def stop(self) -> None:
        self.stopped = True


async def test_a_plugin_failing_at_start_is_reported_stopped_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    plugin = _FailsAtStart()
    with capture_logs() as logs:
        async with Host(_config(tmp_path), [_inmemory(), plugin], discover=False) as host:
            info = _info(host, "rel-fails-at-start")
            assert info.state == "error"
            assert "cannot start on purpose" in (info.error or "")
            assert plugin.stopped, "stop must run even when start failed"
            await _memory_works(host)
    assert _logged_for(logs, "rel-fails-at-start"), "the failure was not logged with its name"


class _FailsAtStop(Plugin):
    name = "rel-fails-at-stop"

    async def stop(self) -> None:
        raise RuntimeError("cannot stop on purpose")


class _RecordsStop(Plugin):
    name = "rel-records-stop"

    def __init__(self) -> None:
        self.stopped = False

    async def stop(self) -> None:
        self.stopped = True


async def test_a_plugin_failing_at_stop_is_reported_and_the_others_still_stop(
    tmp_path: Path,
) -> None:
    # Started first, so stopped last: the failing stop happens while others are stopping.
    witness = _RecordsStop()
    with capture_logs() as logs:
        host = Host(_config(tmp_path), [witness, _inmemory(), _FailsAtStop()], discover=False)
        async with host:
            await _memory_works(host)
    info = _info(host, "rel-fails-at-stop")
    assert info.state == "error"
    assert "cannot stop on purpose" in (info.error or "")
    assert witness.stopped
    assert _info(host, "memory-inmemory").state == "stopped"
    assert _logged_for(logs, "rel-fails-at-stop")


# -- middleware -----------------------------------------------------------------------------


class _FailsInMiddleware(Plugin):
    name = "rel-fails-in-middleware"

    def __init__(self, after: bool) -> None:
        self.after = after

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [ClearType("rel-notes", "Notes of the reliability suite")]

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
        if self.after:
            await call_next()
        raise RuntimeError("middleware broken on purpose")


@pytest.mark.parametrize("after", [False, True], ids=["before-call-next", "after-call-next"])
async def test_a_failing_clear_middleware_is_a_failure_row_and_the_history_still_clears(
    tmp_path: Path, after: bool
) -> None:
    from aalis_agent import run_clear
    from aalis_api_memory import history_cleared

    with capture_logs() as logs:
        host = Host(_config(tmp_path), [_inmemory(), _FailsInMiddleware(after)], discover=False)
        async with host:
            await _memory_works(host, "doomed")
            rows = await run_clear(host, "session", session_id="doomed")
            failed = [r for r in rows if r.source == "rel-fails-in-middleware"]
            assert len(failed) == 1
            assert failed[0].success is False
            assert "middleware broken on purpose" in str(failed[0].message)
            context = [r for r in rows if r.type == "context"]
            assert context
            assert all(r.success for r in context)
            assert history_cleared(
                ClearRequest(scope="session", session_id="doomed", results=list(rows))
            )
            assert await host.capability(memory).use.get_history("doomed") == []
            await _memory_works(host, "after-clear")
    assert _logged_for(logs, "rel-fails-in-middleware")


# -- event handler --------------------------------------------------------------------------


class _FailsInEvent(Plugin):
    name = "rel-fails-in-event"

    @hookimpl
    async def history_changed(self, session_id: str) -> None:
        raise RuntimeError("event handler broken on purpose")


class _HearsEvent(Plugin):
    name = "rel-hears-event"

    def __init__(self) -> None:
        self.heard: list[str] = []

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.heard.append(session_id)


async def test_a_failing_event_handler_is_logged_with_its_name_and_others_still_hear(
    tmp_path: Path,
) -> None:
    hears = _HearsEvent()
    with capture_logs() as logs:
        host = Host(_config(tmp_path), [_inmemory(), _FailsInEvent(), hears], discover=False)
        async with host:
            await host.emit("history_changed", session_id="s1")  # must not raise
            assert hears.heard == ["s1"]
            assert _info(host, "rel-fails-in-event").state == "active"
            await _memory_works(host)
    failures = _logged_for(logs, "rel-fails-in-event")
    assert failures
    assert "event handler broken on purpose" in str(failures[0])
