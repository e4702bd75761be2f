"""Listing, exporting and importing whole sessions on PostgreSQL (``aalis export``/``migrate``).

The contract's ``WithTransfer`` group (aalis_api_memory._backend). An import is one
transaction: a stored or repeated id rolls the whole import back (``MessageIdConflict``).
"""

from __future__ import annotations

from collections.abc import Sequence

from aalis_api_memory import ImportRecord, SessionInfo, StoredMessage
from psycopg.errors import UniqueViolation

from aalis_plugin_memory_postgres._base import PostgresBase
from aalis_plugin_memory_postgres._codec import (
    Row,
    decode_messages_indexed,
    escape,
    message_columns,
    unescape,
)
from aalis_plugin_memory_postgres._identity import id_conflict


class PostgresTransfer(PostgresBase):
    """The transfer storage methods (a mixin of ``PostgresMemory``)."""

    async def _list_sessions(self) -> list[SessionInfo]:
        rows = await self._fetch(self._sql.sessions, ())
        return [
            SessionInfo(
                session_id=unescape(sid),
                active=int(active),
                archived=int(archived),
                last_timestamp=int(last),
            )
            for sid, active, archived, last in rows
        ]

    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        rows = await self._fetch(self._sql.all_rows, (escape(session_id),))
        decoded = decode_messages_indexed([row[2] for row in rows], self._corrupt(session_id))
        return [StoredMessage(message, bool(rows[index][3])) for index, message in decoded]

    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        rows: list[tuple[bool, Row]] = [
            (record.archived, message_columns(record.message, record.timestamp))
            for record in records
        ]
        sid = escape(session_id)
        active = sum(1 for archived, _row in rows if not archived)
        conversation = sum(1 for archived, row in rows if not archived and not row[1])
        params = [
            (sid, ts, archived, control, kind, role, platform, data, ident)
            for archived, (ts, control, kind, role, platform, data, ident) in rows
        ]
        stats = {
            "sid": sid,
            "active": active,
            "conv": conversation,
            "archived": len(rows) - active,
            "ts": max(row[0] for _archived, row in rows),
        }
        # One transaction: a stored or repeated id rolls the whole import back.
        try:
            async with self.pool.connection() as conn, conn.transaction():
                await conn.execute(self._sql.import_stats, stats)
                async with conn.cursor() as cursor:
                    await cursor.executemany(self._sql.import_row, params)
        except UniqueViolation as exc:
            raise id_conflict(exc) from None
        return len(rows)


__all__ = ["PostgresTransfer"]
