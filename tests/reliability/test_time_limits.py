"""A plugin that hangs or calls ``sys.exit`` — in start, stop, a middleware, a listener.

Each hostile plugin runs beside a real memory backend (memory-inmemory, pinned) with small
``[host]`` limits, so the suite stays fast. What must hold every time: the host call ends
(bounded by the limits, not by the plugin), the failure is reported with the plugin's name
(its ``plugins()`` row, the clear's result row, the log), the rest keeps working, and
messages saved to a session held by a clear land once the clear is over.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import run_clear
from aalis_api_memory import ClearRequest, ClearType, history_cleared, memory
from aalis_schema_message import Message
from structlog.testing import capture_logs

from aalis_core import Host, Plugin, hookimpl

pytestmark = pytest.mark.timeout(60)

START, STOP, HOOK = 1.0, 0.5, 0.3
#: Wall-clock slack allowed on top of a limit: these tests check that a call ends because
#: of the limit (instead of never), not how fast the machine is.
SLACK = 5.0


def _inmemory() -> Any:
    from aalis_plugin_memory_inmemory import MemoryInmemory

    return MemoryInmemory()


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "host": {
            "data_dir": str(tmp_path / "data"),
            "start_timeout": START,
            "stop_timeout": STOP,
            "hook_timeout": HOOK,
        },
        "capabilities": {"memory": {"provider": "memory-inmemory"}},
    }


def _info(host: Host, name: str) -> Any:
    return {info.name: info for info in host.plugins()}[name]


def _errors_of(logs: list[dict[str, Any]], plugin: str) -> list[dict[str, Any]]:
    return [
        e for e in logs if e.get("plugin") == plugin and e.get("log_level") in ("error", "warning")
    ]


async def _forever() -> None:
    await asyncio.Event().wait()


def _msg(text: str, ts: int) -> Message:
    return Message(role="user", content=text, timestamp=ts)


# -- start and stop -------------------------------------------------------------------------


class _HangsInStart(Plugin):
    name = "rel-hangs-start"

    async def start(self, ctx: Any) -> None:
        await _forever()


class _IgnoresCancelInStart(Plugin):
    """Swallows the first cancellation and keeps hanging: it is abandoned, not waited for."""

    name = "rel-stubborn-start"

    async def start(self, ctx: Any) -> None:
        try:
            await _forever()
        except asyncio.CancelledError:
            await asyncio.sleep(3600)


class _ExitsInStart(Plugin):
    name = "rel-exits-start"

    async def start(self, ctx: Any) -> None:
        sys.exit(3)


class _HangsInStop(Plugin):
    name = "rel-hangs-stop"

    async def stop(self) -> None:
        await _forever()


class _RecordsStop(Plugin):
    name = "rel-records-stop"

    def __init__(self) -> None:
        self.stopped = False

    async def stop(self) -> None:
        self.stopped = True


@pytest.mark.parametrize(
    ("plugin", "reason"),
    [
        (_HangsInStart, f"start timed out after {START:g} s"),
        (_IgnoresCancelInStart, f"start timed out after {START:g} s"),
        (_ExitsInStart, "SystemExit: 3"),
    ],
)
async def test_a_start_that_hangs_or_exits_is_an_error_row_and_the_host_runs(
    tmp_path: Path, plugin: type[Plugin], reason: str
) -> None:
    host = Host(_config(tmp_path), [_inmemory(), plugin()], discover=False)
    loop = asyncio.get_running_loop()
    began = loop.time()
    with capture_logs() as logs:
        async with host:
            assert loop.time() - began < START + SLACK
            info = _info(host, plugin.name)
            assert info.state == "error"
            assert reason in (info.error or "")
            mem = host.capability(memory).use
            await mem.save_message("s1", _msg("still here", 1))
            assert [m.content for m in await mem.get_history("s1")] == ["still here"]
    assert any(reason in str(e.get("error")) for e in _errors_of(logs, plugin.name))


async def test_a_stop_that_hangs_is_abandoned_and_the_host_still_stops(tmp_path: Path) -> None:
    recorder = _RecordsStop()
    host = Host(_config(tmp_path), [_inmemory(), recorder, _HangsInStop()], discover=False)
    loop = asyncio.get_running_loop()
    with capture_logs() as logs:
        async with host:
            pass
        began = loop.time()
    # __aexit__ returned: bounded by stop_timeout (plus the cancel grace), not by the plugin
    assert loop.time() - began < STOP + SLACK
    assert recorder.stopped
    info = _info(host, "rel-hangs-stop")
    assert info.state == "error"
    assert f"timed out after {STOP:g} s; abandoned" in (info.error or "")
    assert _errors_of(logs, "rel-hangs-stop")


def _named(cls: type[Plugin], name: str, *args: Any) -> Any:
    """An instance of a throw-away subclass of ``cls`` named ``name`` (names are per class)."""
    return type(cls.__name__, (cls,), {"name": name})(*args)


# -- middleware ----------------------------------------------------------------------------


class _Middleware(Plugin):
    """A ``memory_clear`` middleware that misbehaves ``before`` or ``after`` ``call_next``."""

    def __init__(self, how: str, when: str) -> None:
        self.how = how
        self.when = when

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [ClearType(id=f"{self.name}-data", label="Hostile data")]

    async def _misbehave(self) -> None:
        if self.how == "hang":
            await _forever()
        if self.how == "exit":
            sys.exit(3)

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
        if self.when == "before":
            await self._misbehave()
        await call_next()
        if self.when == "after":
            await self._misbehave()


async def _clear_while_saving(
    host: Host, scope: str, session: str | None, sessions: list[str], *, held: bool
) -> tuple[list[Any], float]:
    """Clear while other tasks save to ``sessions``; returns the rows and the clear's time.

    ``held``: the clear is known to be stuck in its chain when the saves start (a hanging
    middleware), so they must wait for it.
    """
    mem = host.capability(memory).use
    loop = asyncio.get_running_loop()
    began = loop.time()
    clear = asyncio.create_task(run_clear(host, scope, session))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)  # the clear holds its sessions by now
    saves = [asyncio.create_task(mem.save_message(s, _msg("said during", 100))) for s in sessions]
    await asyncio.sleep(0.05)
    if held:
        assert not clear.done()
        assert not any(t.done() for t in saves), "a save to a held session did not wait"
    rows = await clear
    took = loop.time() - began
    await asyncio.wait_for(asyncio.gather(*saves), 5)
    return rows, took


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("how", ["hang", "exit"])
async def test_a_middleware_that_hangs_or_exits_is_a_failure_row_and_held_saves_land(
    tmp_path: Path, how: str, when: str
) -> None:
    name = f"rel-{how}-{when}"
    host = Host(
        _config(tmp_path), [_inmemory(), _named(_Middleware, name, how, when)], discover=False
    )
    async with host:
        mem = host.capability(memory).use
        await mem.save_message("s1", _msg("old", 1))
        with capture_logs() as logs:
            rows, took = await _clear_while_saving(
                host, "session", "s1", ["s1"], held=how == "hang"
            )
        assert took < HOOK + SLACK
        failures = [r for r in rows if r.source == name]
        assert len(failures) == 1
        assert not failures[0].success
        expected = f"timed out after {HOOK:g} s" if how == "hang" else "SystemExit: 3"
        assert expected in str(failures[0].message)
        assert history_cleared(rows), rows  # the chain went on past the failing layer
        assert [m.content for m in await mem.get_history("s1")] == ["said during"]
        assert _errors_of(logs, name)


async def test_a_hanging_middleware_in_a_clear_of_everything_releases_every_session(
    tmp_path: Path,
) -> None:
    host = Host(
        _config(tmp_path),
        [_inmemory(), _named(_Middleware, "rel-hang-all", "hang", "before")],
        discover=False,
    )
    async with host:
        mem = host.capability(memory).use
        for session in ("a", "b", "c"):
            await mem.save_message(session, _msg("old", 1))
        rows, took = await _clear_while_saving(host, "all", None, ["a", "b", "z"], held=True)
        assert took < HOOK + SLACK
        assert [r.source for r in rows if not r.success] == ["rel-hang-all"]
        for session in ("a", "b", "z"):
            assert [m.content for m in await mem.get_history(session)] == ["said during"]
        assert await mem.get_history("c") == []


class _ForgetsAwait(Plugin):
    name = "rel-forgets-await"

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
        call_next()  # the bug: no await


async def test_call_next_without_await_is_a_failure_row_and_the_chain_still_runs(
    tmp_path: Path,
) -> None:
    host = Host(_config(tmp_path), [_inmemory(), _ForgetsAwait()], discover=False)
    async with host:
        mem = host.capability(memory).use
        await mem.save_message("s1", _msg("old", 1))
        rows = await run_clear(host, "session", "s1")
        failure = [r for r in rows if r.source == "rel-forgets-await"]
        assert failure
        assert "without awaiting" in str(failure[0].message)
        assert history_cleared(rows)
        assert await mem.get_history("s1") == []


# -- listeners -----------------------------------------------------------------------------


class _Listener(Plugin):
    def __init__(self, how: str) -> None:
        self.how = how
        self.heard: list[str] = []

    @hookimpl
    async def history_changed(self, session_id: str) -> None:
        self.heard.append(session_id)
        if self.how == "hang":
            await _forever()
        if self.how == "exit":
            sys.exit(3)


@pytest.mark.parametrize("how", ["hang", "exit"])
async def test_a_listener_that_hangs_or_exits_is_logged_and_the_clear_completes(
    tmp_path: Path, how: str
) -> None:
    hostile = _named(_Listener, f"rel-listener-{how}", how)
    polite = _named(_Listener, "rel-listener-ok", "listen")
    host = Host(_config(tmp_path), [_inmemory(), hostile, polite], discover=False)
    async with host:
        mem = host.capability(memory).use
        await mem.save_message("s1", _msg("old", 1))
        with capture_logs() as logs:
            rows, took = await _clear_while_saving(host, "session", "s1", ["s1"], held=False)
            await asyncio.sleep(HOOK + 0.2)  # a hung listener's own limit passes too
        assert took < HOOK + SLACK
        assert history_cleared(rows)
        assert hostile.heard == ["s1"]
        assert polite.heard == ["s1"]
        expected = f"timed out after {HOOK:g} s" if how == "hang" else "SystemExit: 3"
        failed = [e for e in _errors_of(logs, hostile.name) if e["event"] == "event handler failed"]
        assert failed
        assert expected in failed[0]["error"]


async def test_events_of_a_clear_of_everything_hold_the_caller_one_hook_timeout(
    tmp_path: Path,
) -> None:
    """Eight sessions, one hanging listener: the clear waits once, not once per session."""
    config = _config(tmp_path)
    config["host"]["hook_timeout"] = 1.0
    hostile = _named(_Listener, "rel-listener-slow", "hang")
    host = Host(config, [_inmemory(), hostile], discover=False)
    async with host:
        mem = host.capability(memory).use
        sessions = [f"s{i}" for i in range(8)]
        for session in sessions:
            await mem.save_message(session, _msg("old", 1))
        loop = asyncio.get_running_loop()
        began = loop.time()
        rows = await run_clear(host, "all")
        took = loop.time() - began
        assert history_cleared(rows)
        assert took < 8 * 1.0 - 1.0  # eight waits in a row would be at least 8 s
    # the delivery went on in the background; stop ended it after stop_timeout
    assert hostile.heard[0] == "s0"
    assert set(hostile.heard) < set(sessions)
