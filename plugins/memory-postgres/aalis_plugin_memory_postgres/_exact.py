"""Exact archiving on PostgreSQL: a snapshot with identities, and an archive that checks them.

The contract is ``aalis_api_memory._exact`` (docs/reference/memory-contract.md, "Exact
archiving"). An id is ``"<seq>:<crc32 of the stored JSON>"``: ``seq`` is an identity column, so
it is never given to another row, and the checksum makes a rewritten message
(``update_message_content``) a different id, since a summary of its old text no longer covers it.

``archive_exact`` is one transaction that first locks the session's ``session_stats`` row (the
lock every writer of the session takes, see ``history.py``) and the guard entry's row, then
compares the guard, checks every id against the active rows, and only then writes the entry,
archives the rows and inserts the marker. A save, archive, rewrite or clear in another process
either commits before (and the checks see it) or waits (and sees the result).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from typing import Any

from aalis_api_memory import (
    ArchiveConflict,
    CheckedGuard,
    ExactCommit,
    HistorySnapshot,
    decode_metadata,
    same_entry,
)
from psycopg import AsyncConnection
from psycopg.errors import UniqueViolation

from aalis_plugin_memory_postgres._base import PostgresBase
from aalis_plugin_memory_postgres._codec import (
    Row,
    decode_messages_indexed,
    escape,
    message_columns,
)
from aalis_plugin_memory_postgres._identity import id_conflict
from aalis_plugin_memory_postgres._schema import quote_schema


def message_id(seq: int, data: str) -> str:
    return f"{seq}:{zlib.crc32(data.encode('utf-8'))}"


def _parse(ident: str) -> tuple[int, int] | None:
    seq, sep, crc = ident.partition(":")
    if not sep or not seq.isdigit() or not crc.isdigit() or len(seq) > 18:
        return None
    return int(seq), int(crc)


class ExactSql:
    """The statements of exact archiving, with the schema name filled in once."""

    def __init__(self, schema: str) -> None:
        s = quote_schema(schema)
        m, st, md = f"{s}.messages", f"{s}.session_stats", f"{s}.metadata"
        self.snapshot = (
            f"SELECT seq, data FROM {m} WHERE session_id = %s AND NOT archived ORDER BY ts, seq"
        )
        self.lock_session = f"SELECT 1 FROM {st} WHERE session_id = %s FOR UPDATE"
        self.lock_guard = f"SELECT data FROM {md} WHERE namespace = %s AND key = %s FOR UPDATE"
        self.active = (
            f"SELECT seq, data, control FROM {m}"
            " WHERE seq = ANY(%s) AND session_id = %s AND NOT archived"
        )
        self.archive = f"UPDATE {m} SET archived = true WHERE seq = ANY(%s)"
        self.archive_stats = (
            f"UPDATE {st} SET active = active - %(n)s, active_conv = active_conv - %(conv)s,"
            " archived = archived + %(n)s WHERE session_id = %(sid)s"
        )
        self.put = (
            f"INSERT INTO {md} (namespace, key, data, updated_at) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data,"
            " updated_at = excluded.updated_at"
        )
        self.marker = (
            f"WITH stats AS (INSERT INTO {st} AS t (session_id, active, active_conv, archived,"
            " last_ts) VALUES (%(sid)s, 1, %(conv)s, 0, %(ts)s) ON CONFLICT (session_id) DO UPDATE"
            " SET active = t.active + 1, active_conv = t.active_conv + excluded.active_conv,"
            " last_ts = greatest(t.last_ts, excluded.last_ts) RETURNING 1)"
            f" INSERT INTO {m} (session_id, ts, control, kind, role, platform, data, id)"
            " SELECT %(sid)s, %(ts)s, %(control)s, %(kind)s, %(role)s, %(platform)s, %(data)s,"
            " %(id)s FROM stats"
        )


async def archive_exact(
    conn: AsyncConnection[Any],
    statements: ExactSql,
    session_id: str,
    ids: Sequence[str],
    guard: CheckedGuard,
    marker: Row | None,
    now: int,
) -> int:
    """Check the guard and the ids, then write, archive and mark; all in one transaction."""
    sid = escape(session_id)
    namespace, key = escape(guard.namespace), escape(guard.key)
    parsed = [_parse(ident) for ident in ids]
    async with conn.transaction():
        await conn.execute(statements.lock_session, (sid,))
        cursor = await conn.execute(statements.lock_guard, (namespace, key))
        row = await cursor.fetchone()
        stored = None if row is None else decode_metadata(row[0])
        if not same_entry(stored, guard.expected):
            raise ArchiveConflict("guard", "the guard entry changed since the snapshot")
        if any(item is None for item in parsed):
            raise ArchiveConflict("messages", "an id does not name a message of this store")
        wanted = {item[0]: item[1] for item in parsed if item is not None}
        conversation = 0
        if wanted:
            cursor = await conn.execute(statements.active, (list(wanted), sid))
            matched = 0
            for seq, data, control in await cursor.fetchall():
                if zlib.crc32(data.encode("utf-8")) == wanted[seq]:
                    matched += 1
                    conversation += 0 if control else 1
            if matched != len(wanted):
                raise ArchiveConflict("messages", "a message of the snapshot is no longer active")
            await conn.execute(statements.archive, (list(wanted),))
            await conn.execute(
                statements.archive_stats, {"sid": sid, "n": len(wanted), "conv": conversation}
            )
        await conn.execute(statements.put, (namespace, key, guard.text, now))
        if marker is not None:
            ts, control, kind, role, platform, data, ident = marker
            await conn.execute(
                statements.marker,
                {
                    "sid": sid,
                    "ts": ts,
                    "conv": 0 if control else 1,
                    "control": control,
                    "kind": kind,
                    "role": role,
                    "platform": platform,
                    "data": data,
                    "id": ident,
                },
            )
    return len(wanted)


class PostgresExact(PostgresBase):
    """The ``ExactArchiving`` storage methods (a mixin of ``PostgresMemory``)."""

    @functools.cached_property
    def _exact(self) -> ExactSql:
        return ExactSql(self.schema)

    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        rows = await self._fetch(self._exact.snapshot, (escape(session_id),))
        decoded = decode_messages_indexed([row[1] for row in rows], self._corrupt(session_id))
        return HistorySnapshot(
            tuple(message for _index, message in decoded),
            tuple(message_id(rows[index][0], rows[index][1]) for index, _message in decoded),
        )

    async def _archive_exact(self, session_id: str, commit: ExactCommit) -> int:
        marker = commit.marker
        row = None if marker is None else message_columns(marker.message, marker.timestamp)
        try:
            async with self.pool.connection() as conn:
                return await archive_exact(
                    conn, self._exact, session_id, commit.ids, commit.guard, row, commit.updated_at
                )
        except UniqueViolation as exc:  # the marker's id is stored already: nothing committed
            raise id_conflict(exc) from None


__all__ = ["ExactSql", "PostgresExact", "archive_exact", "message_id"]
