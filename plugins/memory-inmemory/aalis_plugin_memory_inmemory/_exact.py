"""Exact archiving in process memory (aalis_api_memory._exact).

The contract is in docs/reference/memory-contract.md ("Exact archiving"). A snapshot id is the
row's ``seq``: store-wide and never reused, so it names one message for good. ``archive_exact``
checks the guard and every id and then changes everything without an ``await``: one atomic step
on the loop.
"""

from __future__ import annotations

from aalis_api_memory import (
    ArchiveConflict,
    ExactCommit,
    HistorySnapshot,
    decode_metadata,
    same_entry,
)

from aalis_plugin_memory_inmemory._base import Entry, InMemoryBase


class InMemoryExact(InMemoryBase):
    """The ``ExactArchiving`` storage methods (a mixin of ``InMemoryMemory``)."""

    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        # ``seq`` is store-wide and never reused, so it names one message for good.
        rows = self._active(session_id)
        return HistorySnapshot(
            tuple(self._out(row) for row in rows), tuple(str(row.seq) for row in rows)
        )

    async def _archive_exact(self, session_id: str, commit: ExactCommit) -> int:
        # Every change without an await: one atomic step on the loop.
        guard = commit.guard
        entry = self._metadata.get(guard.namespace, {}).get(guard.key)
        stored = None if entry is None else decode_metadata(entry.text)
        if not same_entry(stored, guard.expected):
            raise ArchiveConflict("guard", "the guard entry changed since the snapshot")
        active = {str(row.seq): row for row in self._active(session_id)}
        rows = [active.get(ident) for ident in commit.ids]
        if any(row is None for row in rows):
            raise ArchiveConflict("messages", "a message of the snapshot is no longer active")
        for row in rows:
            assert row is not None
            row.archived = True
        entry = Entry(guard.text, commit.updated_at)
        self._metadata.setdefault(guard.namespace, {})[guard.key] = entry
        if commit.marker is not None:
            self._insert(session_id, commit.marker.message, commit.marker.timestamp)
        return len(rows)


__all__ = ["InMemoryExact"]
