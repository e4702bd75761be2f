"""The history methods of ``SqliteMemory``: save, read, count, archive a span, clear.

The contract's ``MemoryBackend`` history group with ``WithFullHistory`` and ``WithClearAll``
(aalis_api_memory._backend). Saves queued together commit together (group commit).
Each method encodes on the caller's side and hands the work to a thread: writes to the
worker that owns the connection (``_submit``), reads to the reader connection (``_read``), so a
read never queues behind a write waiting for another process's lock (``base.py``). The SQL of
the job is the synchronous ``Engine`` (``engine.py``), run on those threads.
"""

from __future__ import annotations

from aalis_schema_message import Message

from aalis_plugin_memory_sqlite._base import SqliteBase
from aalis_plugin_memory_sqlite._codec import message_columns
from aalis_plugin_memory_sqlite._engine import Engine, Limit


class SqliteHistory(SqliteBase):
    """The history storage methods (a mixin of ``SqliteMemory``)."""

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        row = message_columns(message, timestamp)
        engine, worker = self._writer()
        # Saves queued together commit together (group commit); each is answered after it.
        await worker.call_batched(engine.save_messages, engine.save_message, session_id, row)

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        return await self._read(Engine.get_history, session_id, limit)

    async def _count_history(self, session_id: str) -> int:
        return await self._read(Engine.count_history, session_id)

    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        return await self._read(Engine.get_full_history, session_id, limit)

    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        return await self._submit(Engine.archive_span, session_id, count, keep)

    async def _clear_session(self, session_id: str) -> None:
        await self._submit(Engine.clear_session, session_id)

    async def _clear_all(self) -> None:
        await self._submit(Engine.clear_all)


__all__ = ["SqliteHistory"]
