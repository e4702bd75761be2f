"""The history methods of ``PostgresMemory``: save, read, count, archive a span, clear.

The contract's ``MemoryBackend`` history group with ``WithFullHistory`` and ``WithClearAll``
(aalis_api_memory._backend). Every write to a session first locks its ``session_stats`` row
(``save_message`` through its upsert, the others with ``SELECT ... FOR UPDATE``), so writers of
one session take turns across processes and the counters never drift from the rows (see
``store.py``).
"""

from __future__ import annotations

from aalis_schema_message import Message
from psycopg.errors import UniqueViolation

from aalis_plugin_memory_postgres._base import Limit, PostgresBase, everything, sql_limit
from aalis_plugin_memory_postgres._codec import decode_messages, escape, message_columns
from aalis_plugin_memory_postgres._identity import id_conflict


class PostgresHistory(PostgresBase):
    """The history storage methods (a mixin of ``PostgresMemory``)."""

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        ts, control, kind, role, platform, data, ident = message_columns(message, timestamp)
        params = {
            "sid": escape(session_id),
            "ts": ts,
            "conv": 0 if control else 1,
            "control": control,
            "kind": kind,
            "role": role,
            "platform": platform,
            "data": data,
            "id": ident,
        }
        # One statement: a duplicate id fails it whole (counters included).
        try:
            async with self.pool.connection() as conn:
                await conn.execute(self._sql.save, params)
        except UniqueViolation as exc:
            raise id_conflict(exc) from None

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        sid = escape(session_id)
        if everything(limit):
            rows = await self._fetch(self._sql.history_all, (sid,))
        else:
            rows = await self._fetch(self._sql.history, {"sid": sid, "limit": int(limit)})
        return decode_messages([row[0] for row in rows], self._corrupt(session_id))

    async def _count_history(self, session_id: str) -> int:
        rows = await self._fetch(self._sql.count, (escape(session_id),))
        return int(rows[0][0]) if rows else 0

    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        async with self.pool.connection() as conn:
            rows = await self._newest(conn, escape(session_id), limit)
        return decode_messages([row[2] for row in rows], self._corrupt(session_id))

    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        positions = keep
        sid = escape(session_id)
        sql = self._sql
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(sql.lock_session, (sid,))
            cursor = await conn.execute(sql.active_span, (sid, sql_limit(count)))
            span = await cursor.fetchall()
            targets = [seq for position, (seq, _c) in enumerate(span) if position not in positions]
            if not targets:
                return 0
            conversation = sum(
                1
                for position, (_seq, control) in enumerate(span)
                if position not in positions and not control
            )
            await conn.execute(sql.archive, (targets,))
            await conn.execute(
                sql.archive_stats, {"sid": sid, "n": len(targets), "conv": conversation}
            )
        return len(targets)

    async def _clear_session(self, session_id: str) -> None:
        sid = escape(session_id)
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(self._sql.lock_session, (sid,))
            await conn.execute(self._sql.clear_messages, (sid,))
            await conn.execute(self._sql.clear_stats, (sid,))

    async def _clear_all(self) -> None:
        # Counters first: that waits for every in-flight write holding a session's row; the
        # message delete (a fresh snapshot) then sees everything those writes committed.
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(self._sql.clear_all_stats)
            await conn.execute(self._sql.clear_all_messages)


__all__ = ["PostgresHistory"]
