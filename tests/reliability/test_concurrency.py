"""Many saves at once, and clears racing saves: nothing acknowledged is lost, order holds.

An agent serving many chats saves from many tasks on one event loop; a backend that lost a
row under contention, duplicated one, or ordered a session by arrival instead of
``(timestamp, insertion sequence)`` would corrupt conversations only under load, which is
exactly when nobody is watching. Every backend runs these, through the host's handle.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import defaultdict
from typing import Any

import pytest
from aalis_api_memory import ClearRequest, FullMemoryService, memory
from aalis_schema_message import Message

from aalis_core import Plugin, hookimpl

pytestmark = pytest.mark.timeout(180)

SAVES = 1000


async def _full(mem: Any, session_id: str) -> list[Message]:
    return list(await mem.get_full_history(session_id, math.inf))


async def test_1000_concurrent_saves_on_one_session_are_all_there_in_order(
    memory: FullMemoryService,
) -> None:
    # No timestamps: each save stores "now", so order must follow time, then insertion.
    saves = [
        memory.save_message("busy", Message(role="user", content=f"m{i}")) for i in range(SAVES)
    ]
    await asyncio.gather(*saves)
    history = await _full(memory, "busy")
    contents = [m.content for m in history]
    assert len(contents) == SAVES
    assert set(contents) == {f"m{i}" for i in range(SAVES)}
    stamps = [m.timestamp for m in history]
    assert all(isinstance(t, int) for t in stamps)
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    assert await memory.count_history("busy") == SAVES
    assert await memory.get_history("busy", math.inf) == history


async def test_concurrent_writers_keep_their_own_order_on_equal_timestamps(
    memory: FullMemoryService,
) -> None:
    """20 tasks x 50 awaited saves, all with one timestamp: ties fall back to insertion order,
    so each writer's messages must come back in the order that writer saved them."""
    writers, per_writer, stamp = 20, SAVES // 20, 1_700_000_000_000

    async def writer(w: int) -> None:
        for j in range(per_writer):
            await memory.save_message(
                "ties", Message(role="user", content=f"{w}:{j}", timestamp=stamp)
            )

    await asyncio.gather(*(writer(w) for w in range(writers)))
    history = await _full(memory, "ties")
    assert len(history) == SAVES
    seen: dict[int, list[int]] = defaultdict(list)
    for message in history:
        w, j = map(int, (message.content or "").split(":"))
        seen[w].append(j)
    assert {w: js for w, js in seen.items()} == {w: list(range(per_writer)) for w in range(writers)}


async def test_1000_concurrent_saves_across_50_sessions_sort_by_timestamp(
    memory: FullMemoryService,
) -> None:
    sessions, per_session = 50, SAVES // 50
    rng = random.Random(7)
    planned = [
        (f"s{s}", 1_000_000 + t * 1000, f"s{s}-t{t}")
        for s in range(sessions)
        for t in range(per_session)
    ]
    rng.shuffle(planned)  # issue order unrelated to timestamp order
    await asyncio.gather(
        *(
            memory.save_message(sid, Message(role="user", content=c, timestamp=ts))
            for sid, ts, c in planned
        )
    )
    for s in range(sessions):
        history = await _full(memory, f"s{s}")
        assert [m.content for m in history] == [f"s{s}-t{t}" for t in range(per_session)]
    infos = {info.session_id: info for info in await memory.list_sessions()}
    assert {sid for sid in infos if sid.startswith("s")} >= {f"s{s}" for s in range(sessions)}
    assert all(infos[f"s{s}"].active == per_session for s in range(sessions))


# -- clears racing saves, through the host ----------------------------------------------------


class _ClearProbe(Plugin):
    """Signals when the clear has begun (its hold is in place) and widens the race window."""

    name = "rel-clear-probe"

    def __init__(self) -> None:
        self.entered: asyncio.Event | None = None

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
        assert self.entered is not None
        self.entered.set()
        await asyncio.sleep(0.05)  # saves started now must wait, not be wiped
        await call_next()
        await asyncio.sleep(0.02)


async def _race(
    host: Any, probe: _ClearProbe, scope: str, sessions: list[str]
) -> tuple[set[str], set[str]]:
    """Run writers on ``sessions`` while a clear runs; return (saves that started while the
    clear was under way, contents found afterwards)."""
    from aalis_agent import run_clear

    mem = host.capability(memory).use
    probe.entered = asyncio.Event()
    for sid in sessions:
        for i in range(5):
            await mem.save_message(sid, Message(role="user", content=f"{sid}-old{i}"))
    during: set[str] = set()
    clearing = asyncio.Event()
    cleared = asyncio.Event()

    def clear_has_begun(sid: str) -> bool:
        # The clear has begun once it holds the session (``is_held``, the contract's
        # adapter) or its middleware runs; a save starting from then on must survive it.
        held = getattr(mem, "is_held", None)
        return probe.entered is not None and (probe.entered.is_set() or bool(held and held(sid)))

    async def writer(sid: str, k: int) -> None:
        for j in range(400):
            if cleared.is_set():
                return
            content = f"{sid}-w{k}-{j}"
            if clearing.is_set() and clear_has_begun(sid):
                during.add(content)
            await mem.save_message(sid, Message(role="user", content=content))
            await asyncio.sleep(0.001)

    tasks = [asyncio.create_task(writer(sid, k)) for sid in sessions for k in range(3)]
    await asyncio.sleep(0.01)
    clearing.set()
    if scope == "all":
        rows = await run_clear(host, "all")
    else:
        rows = await run_clear(host, "session", session_id=sessions[0])
    cleared.set()
    await asyncio.gather(*tasks)
    assert any(r.type == "context" and r.success for r in rows), rows
    found: set[str] = set()
    for sid in sessions:
        found |= {m.content or "" for m in await _full(mem, sid)}
    return during, found


async def test_saves_started_during_a_session_clear_are_not_lost(host_with: Any) -> None:
    probe = _ClearProbe()
    async with host_with(probe) as host:
        during, found = await _race(host, probe, "session", ["raced"])
    assert during, "no save started during the clear: the race did not happen"
    assert during <= found, f"lost: {sorted(during - found)[:10]}"
    assert not {f"raced-old{i}" for i in range(5)} & found, "the clear did not clear"


async def test_saves_started_during_a_clear_of_everything_are_not_lost(host_with: Any) -> None:
    probe = _ClearProbe()
    async with host_with(probe) as host:
        during, found = await _race(host, probe, "all", ["a", "b", "c"])
    assert during, "no save started during the clear: the race did not happen"
    assert during <= found, f"lost: {sorted(during - found)[:10]}"
    assert not {f"{s}-old{i}" for s in "abc" for i in range(5)} & found
