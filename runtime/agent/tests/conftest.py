"""Fixtures for the agent runtime's tests: a real host with the in-memory backend beside
throwaway plugins that take part in clears."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import ClearRequest, ClearType

from aalis_core import Plugin, hookimpl
from aalis_core.testing import running_host

inmemory = pytest.importorskip(
    "aalis_plugin_memory_inmemory", reason="the host tests run on memory-inmemory"
)


class Participant(Plugin):
    """A plugin that owns one clear type and reports it from its ``memory_clear`` middleware.

    ``when`` says where it reports: "in" (before call_next), "out" (after), "never"
    (contributes the type but answers nothing), "raise-in"/"raise-out" (raises there),
    "stop" (short-circuits: never calls call_next).
    """

    def __init__(self, type_id: str, when: str = "out") -> None:
        self.type_id = type_id
        self.when = when
        self.seen: list[ClearRequest] = []
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [ClearType(self.type_id, f"{self.type_id} data")]

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Callable[[], Any]) -> None:
        self.seen.append(request)
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.when == "raise-in":
            raise RuntimeError(f"{self.name} broke on the way in")
        if self.when == "stop":
            return
        if self.when == "in" and request.wants(self.type_id):
            request.report(self.name, True, f"{self.type_id} cleared", self.type_id)
        await call_next()
        if self.when == "raise-out":
            raise RuntimeError(f"{self.name} broke on the way out")
        if self.when == "out" and request.wants(self.type_id):
            request.report(self.name, True, f"{self.type_id} cleared", self.type_id)


class Listener(Plugin):
    """Records ``history_changed`` events."""

    name = "listener"

    def __init__(self) -> None:
        self.changed: list[str] = []

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.changed.append(session_id)


@pytest.fixture
def make_participant() -> Callable[..., Participant]:
    """``make_participant(name, type_id, when="out")`` builds a ``Participant`` plugin."""

    def factory(name: str, type_id: str, when: str = "out") -> Participant:
        # Plugin.name is a class attribute the host reads from the class: a class per name.
        cls = type(f"Participant_{name.replace('-', '_')}", (Participant,), {"name": name})
        return cls(type_id, when)

    return factory


@pytest.fixture
def listener() -> Listener:
    """A plugin recording ``history_changed`` events."""
    return Listener()


@pytest.fixture
def make_host(tmp_path: Path) -> Callable[..., Any]:
    """``async with make_host(*plugins) as host`` starts memory-inmemory plus ``plugins``."""

    def factory(
        *plugins: Plugin, backend: Plugin | None = None, config: dict[str, Any] | None = None
    ) -> Any:
        chosen: Sequence[Plugin] = [backend or inmemory.MemoryInmemory(), *plugins]
        return running_host(plugins=chosen, data_dir=tmp_path, config=config)

    return factory


__all__ = ["Listener", "Participant"]
