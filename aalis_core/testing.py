"""Helpers for plugin authors' tests.

Test a plugin the way it runs: in a real host, with throwaway plugins beside it, without
depending on what else happens to be installed in the environment::

    from aalis_core.testing import running_host

    async def test_my_plugin(tmp_path):
        async with running_host(plugins=[MyPlugin()], data_dir=tmp_path) as host:
            assert host.plugins()[0].state == "active"

``capture_logs`` records what plugins log (after redaction), as parsed JSON lines::

    with capture_logs() as logs:
        ...
    assert any(line["event"] == "plugin failed" for line in logs.lines)
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from aalis_core._config import ConfigError
from aalis_core._host import Host
from aalis_core._plugin import Plugin


def make_test_host(
    plugins: Sequence[Plugin] = (),
    config: Mapping[str, Any] | None = None,
    *,
    discover: bool = False,
    data_dir: str | Path | None = None,
    hookspecs: Iterable[Any] = (),
    consumer: str = "host",
) -> Host:
    """Build (not start) a host for tests; see ``running_host``."""
    cfg: dict[str, Any] = {k: v for k, v in (config or {}).items()}
    if data_dir is not None:
        cfg["host"] = {**cfg.get("host", {}), "data_dir": str(data_dir)}
    return Host(cfg, plugins, discover=discover, hookspecs=hookspecs, consumer=consumer)


def plugin_config_error(host: Host, name: str) -> ConfigError:
    """The problems of plugin ``name``'s ``[plugins.<name>]`` table, as one ``ConfigError``.

    A bad plugin table fails only that plugin (it is ``error`` with the problems as its
    reason); this checks that, and returns the error to assert on (file, table, key)::

        error = plugin_config_error(make_test_host([MyPlugin()], config), "my-plugin")
        assert error.key == "size"
    """
    info = {i.name: i for i in host.plugins()}.get(name)
    assert info is not None, f"no plugin named {name!r}"
    assert info.state == "error", f"plugin {name!r} is {info.state}, not error"
    error = host.config_errors().get(name)
    assert error is not None, f"plugin {name!r} failed for another reason: {info.error}"
    return error


@asynccontextmanager
async def running_host(
    plugins: Sequence[Plugin] = (),
    config: Mapping[str, Any] | None = None,
    *,
    discover: bool = False,
    data_dir: str | Path | None = None,
    hookspecs: Iterable[Any] = (),
    consumer: str = "host",
) -> AsyncIterator[Host]:
    """Start a host with ``plugins`` (and, by default, nothing discovered); stop it after.

    ``config`` is an ``aalis.toml``-shaped dict; ``data_dir`` (for example pytest's
    ``tmp_path``) overrides ``[host] data_dir``. Contracts' hookspecs are loaded from
    their entry points as usual, ``hookspecs`` adds more.
    """
    host = make_test_host(
        plugins,
        config,
        discover=discover,
        data_dir=data_dir,
        hookspecs=hookspecs,
        consumer=consumer,
    )
    async with host:
        yield host


class LogCapture:
    """Log lines captured by ``capture_logs``: raw text and parsed JSON."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    @property
    def text(self) -> str:
        """Everything written, as rendered (JSON lines)."""
        return self.stream.getvalue()

    @property
    def lines(self) -> list[dict[str, Any]]:
        """Each line parsed from JSON."""
        return [json.loads(line) for line in self.text.splitlines() if line.strip()]


@contextmanager
def capture_logs(level: str = "debug") -> Iterator[LogCapture]:
    """Capture structlog output of the host and plugins as JSON lines.

    The full processor chain runs (redaction included), so tests see exactly what would be
    written. The previous structlog configuration is restored afterwards.
    """
    import structlog

    from aalis_core._logging import configure_logging

    previous = structlog.get_config()
    capture = LogCapture()
    configure_logging(level, "json", stream=capture.stream)
    try:
        yield capture
    finally:
        structlog.configure(**previous)


__all__ = [
    "LogCapture",
    "capture_logs",
    "make_test_host",
    "plugin_config_error",
    "running_host",
]
