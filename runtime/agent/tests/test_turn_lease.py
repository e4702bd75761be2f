"""``run_turn`` holds the session's turn lease: two callers take turns, never interleave.

The multi-process proof (three ``aalis chat`` processes) is tests/reliability/
test_chat_turn_lease.py; these pin the rules down on one machine: the second caller waits,
gives up with ``TurnBusy`` after ``turn_wait`` having saved nothing, the lease is renewed
while a slow model runs, and a store without leases still orders turns within the process.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import TurnBusy, TurnError, TurnSettings, hold_turn, run_turn
from aalis_api_memory import memory, turn_lease_name
from aalis_schema_message import Message

from aalis_core.testing import running_host

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


class Reply:
    def __init__(self, content: str) -> None:
        self.content = content
        self.usage = None


class HeldModel:
    """Echoes the newest user message; each call waits ``delay`` seconds or for ``gate``."""

    id = "held"
    context_window = 8192

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()
        self.asked: list[str] = []

    async def chat(self, messages: Sequence[Message], **kwargs: Any) -> Reply:
        newest = next(m for m in reversed(messages) if m.role == "user")
        self.asked.append(newest.content or "")
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        await asyncio.sleep(self.delay)
        return Reply(f"answer to {newest.content}")


def pairs_follow(history: Sequence[Message]) -> bool:
    talk = [m for m in history if not m.is_control]
    return all(
        talk[i - 1].role == "user" and m.content == f"answer to {talk[i - 1].content}"
        for i, m in enumerate(talk)
        if m.role == "assistant"
    )


async def test_a_second_turn_waits_for_the_first_and_is_told_once(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        model = HeldModel()
        model.gate = asyncio.Event()
        first = asyncio.create_task(run_turn(host, store, model, "s", "first"))
        await asyncio.wait_for(model.entered.wait(), 5)
        waits: list[str] = []
        second = asyncio.create_task(
            run_turn(host, store, model, "s", "second", on_wait=lambda: waits.append("w"))
        )
        await asyncio.sleep(0.3)
        # the second turn has not even saved its question while the first one runs
        assert [m.content for m in await store.get_history("s", math.inf)] == ["first"]
        assert waits == ["w"]
        model.gate.set()
        await asyncio.gather(first, second)
        history = await store.get_history("s", math.inf)
    assert [m.content for m in history] == [
        "first",
        "answer to first",
        "second",
        "answer to second",
    ]
    assert model.asked == ["first", "second"]
    assert waits == ["w"]


async def test_two_stores_on_one_sqlite_file_take_turns(tmp_path: Path) -> None:
    """Two store objects on one file stand for two processes: no shared Python state."""
    sqlite = pytest.importorskip("aalis_plugin_memory_sqlite")
    path = tmp_path / "shared.db"
    stores = [await sqlite.SqliteMemory(path).open() for _ in range(2)]
    try:
        model = HeldModel(delay=0.02)
        host = _NoHost()
        turns = [run_turn(host, stores[i % 2], model, "s", f"q{i}") for i in range(12)]
        await asyncio.gather(*turns)
        history = await stores[0].get_history("s", math.inf)
    finally:
        for store in stores:
            await store.close()
    assert len(history) == 24
    assert pairs_follow(history)


async def test_a_turn_that_waits_too_long_is_busy_and_saves_nothing(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        assert await store.acquire_lease(turn_lease_name("s"), "another-process", 60_000)
        with pytest.raises(TurnBusy, match="another turn of session 's'") as info:
            await run_turn(
                host, store, HeldModel(), "s", "hello", settings=TurnSettings(turn_wait=0.3)
            )
        assert info.value.stage == "wait"
        assert info.value.user is None
        assert await store.get_history("s", math.inf) == []
        # once the other turn is over, turns run again
        assert await store.release_lease(turn_lease_name("s"), "another-process")
        await run_turn(host, store, HeldModel(), "s", "hello")
        assert len(await store.get_history("s", math.inf)) == 2


async def test_the_lease_is_renewed_while_a_slow_turn_runs_and_released_after() -> None:
    store = inmemory.InMemoryMemory()
    name = turn_lease_name("s")
    async with hold_turn(store, "s", wait_s=1, ttl_ms=200):
        for _ in range(6):  # 0.6 s: three times the ttl
            await asyncio.sleep(0.1)
            assert await store.acquire_lease(name, "intruder", 60_000) is False
    assert await store.acquire_lease(name, "intruder", 60_000) is True


async def test_a_failing_turn_releases_the_lease(tmp_path: Path) -> None:
    class Failing(HeldModel):
        async def chat(self, messages: Sequence[Message], **kwargs: Any) -> Reply:
            raise RuntimeError("endpoint down")

    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        with pytest.raises(Exception, match="endpoint down"):
            await run_turn(host, store, Failing(), "s", "q")
        assert await store.acquire_lease(turn_lease_name("s"), "next", 60_000) is True


class BrokenLeases:
    """A store whose lease table cannot be reached (everything else delegated)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def acquire_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        raise OSError("lease table unreadable")

    async def release_lease(self, name: str, holder: str) -> bool:
        raise OSError("lease table unreadable")


async def test_a_store_that_cannot_take_the_lease_is_a_turn_error_and_saves_nothing(
    tmp_path: Path,
) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        with pytest.raises(TurnError, match="lease table unreadable") as info:
            await run_turn(host, BrokenLeases(store), HeldModel(), "s", "hello")
        assert not isinstance(info.value, TurnBusy)
        assert await store.get_history("s", math.inf) == []


class WithoutLeases:
    """A store that lacks the Leases group (everything else delegated)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in ("acquire_lease", "release_lease"):
            raise AttributeError(name)
        return getattr(self._inner, name)


class Recorder:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.warnings.append(event)


async def test_a_store_without_leases_orders_turns_in_process_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aalis_agent._turn as turn
    import aalis_agent._turn_lease as leases

    log = Recorder()
    monkeypatch.setattr(turn, "get_logger", lambda name: log)
    monkeypatch.setattr(leases, "_warned_stores", set())
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = WithoutLeases(host.capability(memory).use)
        model = HeldModel(delay=0.02)
        await asyncio.gather(*(run_turn(host, store, model, "s", f"q{i}") for i in range(6)))
        history = await store.get_history("s", math.inf)
    assert len(history) == 12
    assert pairs_follow(history)
    assert len(log.warnings) == 1
    assert "not across processes" in log.warnings[0]


class _NoHost:
    """The least a host offers ``run_turn``: events go nowhere."""

    async def emit(self, hook: str, **payload: Any) -> None:
        return None

    def hook_impls(self, name: str) -> list[Any]:
        raise ValueError(name)
