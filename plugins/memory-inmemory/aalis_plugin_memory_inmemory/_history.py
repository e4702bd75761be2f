"""The history methods of ``InMemoryMemory``: save, read, count, archive a span, clear.

The contract's ``MemoryBackend`` history group with ``WithFullHistory`` and ``WithClearAll``
(aalis_api_memory._backend). Each method runs without an ``await``, so it is one atomic step on
the event loop.
"""

from __future__ import annotations

import math

from aalis_api_memory import take_last
from aalis_schema_message import Message

from aalis_plugin_memory_inmemory._base import InMemoryBase, Limit, Row


class InMemoryHistory(InMemoryBase):
    """The history storage methods (a mixin of ``InMemoryMemory``)."""

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        self._refuse_stored_ids([message])
        self._insert(session_id, message, timestamp)

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        return [self._out(row) for row in self._last_conversation(self._active(session_id), limit)]

    async def _count_history(self, session_id: str) -> int:
        return sum(1 for row in self._rows(session_id) if not row.archived and row.conversation)

    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        return [self._out(row) for row in take_last(self._rows(session_id), limit)]

    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        active = self._active(session_id)
        chosen = active if count == math.inf else active[: int(count)]
        archived = 0
        for position, row in enumerate(chosen):
            if position not in keep:
                row.archived = True
                archived += 1
        return archived

    async def _clear_session(self, session_id: str) -> None:
        self._forget_ids(self._sessions.pop(session_id, []))

    async def _clear_all(self) -> None:
        self._sessions.clear()
        self._ids.clear()

    @staticmethod
    def _last_conversation(rows: list[Row], limit: Limit) -> list[Row]:
        """Every row after the (limit+1)-th newest conversation row (markers included)."""
        if limit == math.inf:
            return rows
        seen = 0
        for index in range(len(rows) - 1, -1, -1):
            if rows[index].conversation:
                seen += 1
                if seen > limit:
                    return rows[index + 1 :]
        return rows


__all__ = ["InMemoryHistory"]
