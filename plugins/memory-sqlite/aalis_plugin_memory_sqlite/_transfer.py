"""Listing, exporting and importing whole sessions on SQLite (``aalis export``/``migrate``).

The contract's ``WithTransfer`` group (aalis_api_memory._backend). An import is one
transaction: a stored or repeated id rolls it back whole.
Each method encodes on the caller's side and hands the work to a thread: writes to the
worker that owns the connection (``_submit``), reads to the reader connection (``_read``), so a
read never queues behind a write waiting for another process's lock (``base.py``). The SQL of
the job is the synchronous ``Engine`` (``engine.py``), run on those threads.
"""

from __future__ import annotations

from collections.abc import Sequence

from aalis_api_memory import ImportRecord, SessionInfo, StoredMessage

from aalis_plugin_memory_sqlite._base import SqliteBase
from aalis_plugin_memory_sqlite._codec import Row, message_columns
from aalis_plugin_memory_sqlite._engine import Engine


class SqliteTransfer(SqliteBase):
    """The transfer storage methods (a mixin of ``SqliteMemory``)."""

    async def _list_sessions(self) -> list[SessionInfo]:
        return await self._read(Engine.list_sessions)

    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        pairs = await self._read(Engine.export_session, session_id)
        return [StoredMessage(message, archived) for message, archived in pairs]

    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        rows: list[tuple[bool, Row]] = [
            (record.archived, message_columns(record.message, record.timestamp))
            for record in records
        ]
        return await self._submit(Engine.import_messages, session_id, rows)


__all__ = ["SqliteTransfer"]
