"""memory-summary's part in ``forget_person`` (docs/host/privacy.md): the person's own
summaries are dropped, a group's is recomputed from what remains, offline."""

from __future__ import annotations

from typing import Any

import pytest
from aalis_agent import forget_person
from aalis_api_memory import compression, memory
from aalis_plugin_memory_summary import MemorySummary
from aalis_schema_message import Message

from aalis_core import Host

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")

ANN = {"platform": "telegram", "user_id": "ann"}
BOB = {"platform": "telegram", "user_id": "bob"}


def said(text: str, ts: int, who: dict[str, str] | None) -> Message:
    role = "user" if who is not None else "assistant"
    return Message(role=role, content=text, timestamp=ts, metadata=who)


async def test_forget_drops_private_summaries_and_recomputes_group_ones() -> None:
    config: dict[str, Any] = {"plugins": {"memory-summary": {"summariser": "extractive"}}}
    async with Host(config, [inmemory.MemoryInmemory(), MemorySummary()], discover=False) as host:
        mem, service = host.capability(memory).use, host.capability(compression).use
        await mem.save_message("ann-dm", said("my locker code is 4417", 1, ANN))
        await mem.save_message("ann-dm", said("locker 4417 noted", 2, None))
        for ts, (text, who) in enumerate(
            [
                ("the quarterly budget review is on Thursday", BOB),
                ("my flat on Elm Street floods every spring", ANN),
                ("the quarterly budget needs two more approvals", BOB),
            ],
            start=10,
        ):
            await mem.save_message("grp", said(text, ts, who))
        await service.compress("ann-dm")
        await service.compress("grp")
        group_before = await service.summary("grp")
        assert group_before is not None
        assert "Elm Street" in group_before.text
        assert await service.summary("ann-dm") is not None

        rows = await forget_person(host, "telegram:ann")
        [row] = [r for r in rows if r.source == "memory-summary"]
        assert row.success, row
        assert row.counts == {"recomputed": 1, "dropped": 1}
        assert await service.summary("ann-dm") is None
        group_after = await service.summary("grp")
        assert group_after is not None
        assert "Elm Street" not in group_after.text
        assert "quarterly budget" in group_after.text
        assert group_after.model == "extractive"


async def test_a_forget_that_touches_nobody_changes_no_summary() -> None:
    async with Host({}, [inmemory.MemoryInmemory(), MemorySummary()], discover=False) as host:
        rows = await forget_person(host, "telegram:nobody")
        [row] = [r for r in rows if r.source == "memory-summary"]
        assert row.success
        assert row.counts == {"recomputed": 0, "dropped": 0}
