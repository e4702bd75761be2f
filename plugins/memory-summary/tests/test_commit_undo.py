"""A clear that arrives in the middle of a commit: the commit takes back what it wrote.

Both committers (exact and positional) share one "cancelled -> undo" path (``commit.Undo``).
The plugin's ``step`` callable stops each commit right after its first write, a real
``run_clear`` of the same host runs from there, and the commit must then fail with
``cleared`` having undone that write: the exact commit its pending entry, the positional
commit its summary (the previous one back after a history-only clear, none after a clear of
summaries). The in-memory reference backend stands for the store; the positional commit gets
the same store with its exact archiving hidden.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from aalis_agent import run_clear
from aalis_api_memory import CompressionError, MemoryProviderPlugin, compression, memory
from aalis_plugin_memory_summary import MemorySummary
from aalis_plugin_memory_summary._records import PENDING_NAMESPACE, SUMMARY_NAMESPACE
from aalis_schema_message import Message

from aalis_core import Host

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")

SID = "s"
PREVIOUS = {
    "text": "old summary",
    "covered_from": 1,
    "covered_to": 2,
    "updated_at": 3,
    "model": "x",
}


class Positional(inmemory.InMemoryMemory):  # type: ignore[misc]
    """The reference store without exact archiving: memory-summary commits by position."""

    history_snapshot = None
    archive_exact = None


class Store(MemoryProviderPlugin[Any]):
    """A memory backend plugin (it contributes the ``context`` clear type) over ``store``."""

    name = "undo-memory"

    def __init__(self, store: type[Any]) -> None:
        super().__init__()
        self.store_class = store

    async def open_store(self, ctx: Any) -> Any:
        return self.store_class()


class ClearAt:
    """The plugin's ``step``: at ``where``, start a clear of the session and let it run
    until it has reached memory-summary's middleware (it cancels the job there)."""

    def __init__(self, where: str, types: list[str]) -> None:
        self.where = where
        self.types = types
        self.host: Host | None = None
        self.clear: asyncio.Task[Any] | None = None
        self.seen: list[str] = []

    async def __call__(self, name: str) -> None:
        self.seen.append(name)
        if name != self.where or self.clear is not None:
            return
        assert self.host is not None
        self.clear = asyncio.create_task(
            run_clear(self.host, "session", session_id=SID, types=self.types)
        )
        # The clear's history deletion may wait for this commit's hold; its middleware
        # (which marks the job) runs first, within a few turns of the loop.
        await asyncio.wait({self.clear}, timeout=0.5)


async def _compress_with_clear(
    store: type[Any], where: str, types: list[str]
) -> tuple[CompressionError, Any, list[Any], list[Message], ClearAt]:
    step = ClearAt(where, types)
    config = {"plugins": {"memory-summary": {"summariser": "extractive"}}}
    async with Host(config, [Store(store), MemorySummary(step=step)], discover=False) as host:
        step.host = host
        mem = host.capability(memory).use
        for i in range(6):
            role = "user" if i % 2 == 0 else "assistant"
            await mem.save_message(
                SID, Message(role=role, content=f"{role} fact {i}", timestamp=1000 + i)
            )
        await mem.save_metadata(SUMMARY_NAMESPACE, SID, PREVIOUS)
        service = host.capability(compression).use
        with pytest.raises(CompressionError) as caught:
            await asyncio.wait_for(service.compress(SID), 30)
        assert step.clear is not None
        await asyncio.wait_for(step.clear, 30)
        summary = await mem.get_metadata(SUMMARY_NAMESPACE, SID)
        pending = await mem.list_metadata(PENDING_NAMESPACE)
        full = await mem.get_full_history(SID, math.inf)
        assert not service.running(SID)
    return caught.value, summary, pending, full, step


@pytest.mark.parametrize("types", [["context"], ["context", "summary"]])
async def test_exact_commit_cancelled_after_its_pending_entry_removes_it(types: list[str]) -> None:
    error, summary, pending, full, step = await _compress_with_clear(
        inmemory.InMemoryMemory, "pending-saved", types
    )
    assert error.reason_code == "cleared"
    assert step.seen == ["pending-saved"]  # stopped before the archive
    assert pending == []  # the pending ids were taken back
    assert full == []  # the clear deleted the history; nothing was archived before it
    if types == ["context"]:
        assert summary == PREVIOUS  # the guard never wrote the new summary
    else:
        assert summary is None


@pytest.mark.parametrize("types", [["context"], ["context", "summary"]])
async def test_positional_commit_cancelled_after_saving_its_summary_takes_it_back(
    types: list[str],
) -> None:
    error, summary, pending, full, step = await _compress_with_clear(
        Positional, "summary-saved", types
    )
    assert error.reason_code == "cleared"
    assert step.seen == ["summary-saved"]
    assert full == []  # archive_span never ran; the clear deleted the history
    assert pending == []
    if types == ["context"]:
        assert summary == PREVIOUS  # a history-only clear keeps the summary from before
    else:
        assert summary is None  # a clear of summaries leaves none
