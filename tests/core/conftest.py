"""Shared fixtures for the host tests.

Throwaway plugins are defined in the test modules and passed in-process with
``Host(plugins=[...], discover=False)``; the hookspecs they implement come from the
``Specs`` namespace below (added with ``hookspecs=[Specs]``), so the tests do not depend
on any contract. Helpers live in fixtures because tests run with --import-mode=importlib.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

import aalis_core._logging as aalis_logging
from aalis_core import Host, hookspec
from aalis_core._plugin import Plugin


@pytest.fixture(autouse=True)
def _logging_left_as_found() -> Iterator[None]:
    """A host built with ``log_level = "debug"`` configures process-wide logging; without
    this, a later CLI test (which keeps a configuration it finds) printed debug lines."""
    saved, configured = structlog.get_config(), aalis_logging._configured
    pending = aalis_logging._pending
    structlog_configured = structlog.is_configured()
    yield
    structlog.reset_defaults()
    if structlog_configured:
        structlog.configure(**saved)
    aalis_logging._configured = configured
    aalis_logging._pending = pending


class Specs:
    """Hooks of a pretend contract: two events, a middleware and a contribution hook."""

    @hookspec
    def thing_changed(self, session_id: str) -> None:
        """Event."""

    @hookspec
    def note_added(self, session_id: str, text: str) -> None:
        """Event with two payload keys."""

    @hookspec
    async def thing_clear(self, request: Any, call_next: Any) -> None:
        """Middleware."""

    @hookspec
    def thing_types(self) -> list[Any]:
        """Contribution."""
        return []


@pytest.fixture
def specs() -> type[Specs]:
    return Specs


@pytest.fixture
def make_host(tmp_path: Path) -> Callable[..., Host]:
    """Build a host with the test hookspecs, nothing discovered, data under tmp_path."""

    def make(*plugins: Plugin, config: dict[str, Any] | None = None, **kwargs: Any) -> Host:
        cfg = dict(config or {})
        cfg.setdefault("host", {}).setdefault("data_dir", str(tmp_path / "data"))
        kwargs.setdefault("discover", False)
        kwargs.setdefault("hookspecs", [Specs])
        return Host(cfg, list(plugins), **kwargs)

    return make


class DistBuilder:
    """Creates real installed distributions (dist-info + module) in a folder on sys.path.

    ``importlib_metadata.entry_points()`` finds them exactly as it finds pip-installed
    ones, so discovery is tested through a real entry-point lookup.
    """

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        monkeypatch.syspath_prepend(str(root))
        self._modules: list[str] = []

    def module(self, name: str, source: str) -> None:
        (self.root / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        self._modules.append(name)

    def dist(
        self,
        dist_name: str,
        version: str = "0.1.0",
        plugins: dict[str, str] | None = None,
        hookspecs: dict[str, str] | None = None,
    ) -> None:
        info = self.root / f"{dist_name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines: list[str] = []
        if plugins:
            lines.append("[aalis.plugins]")
            lines += [f"{k} = {v}" for k, v in plugins.items()]
        if hookspecs:
            lines.append("[aalis.hookspecs]")
            lines += [f"{k} = {v}" for k, v in hookspecs.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def cleanup(self) -> None:
        for name in self._modules:
            sys.modules.pop(name, None)


@pytest.fixture
def dists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DistBuilder]:
    builder = DistBuilder(tmp_path / "site", monkeypatch)
    yield builder
    builder.cleanup()
