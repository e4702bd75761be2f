"""``PostgresMemory``: the ``MemoryService`` on PostgreSQL, every optional method included.

The contract's methods come from ``CompleteMemoryBackend`` (aalis_api_memory._backend), which
validates and normalises every argument before anything is sent (bad input raises and changes
nothing, as on every backend); the storage methods here encode and run on a connection borrowed
from a psycopg ``AsyncConnectionPool``.

Transactions. Connections are in autocommit mode, so a single statement is its own transaction
and costs one round trip: ``save_message`` is one statement (a data-modifying CTE that bumps the
session's counters and inserts the row), as are ``get_history`` and ``count_history``. Writes
that read before they change (``archive_span``, ``delete_messages_by_timestamps``,
``update_message_content``, ``clear_session``) and ``commit_metadata`` run in an explicit
transaction: all or nothing, on any number of processes and hosts.

Several writers. Every write to a session first locks that session's ``session_stats`` row
(``save_message`` through its upsert, the others with ``SELECT ... FOR UPDATE``). Writers of one
session therefore take turns, whichever process or host they run in, and each statement after
the lock sees everything committed before it (READ COMMITTED takes a fresh snapshot per
statement): an ``archive_span`` counts positions on the list as it is once it holds the lock,
and the counters never drift from the rows. The insertion sequence is an identity column, so
it is unique and increasing across processes; each writer's own saves keep their order.

Message ids. Every message's id is in the ``id`` column, under a unique index, and in its JSON
text (what reads return). A stored id makes the save's statement or the import's transaction
fail whole, raised as ``MessageIdConflict`` (docs/backends/postgres.md, "Message ids").
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Sequence
from typing import Any

import structlog
from aalis_api_memory import (
    BackendUnavailable,
    CompleteMemoryBackend,
    EncodedOp,
    ExactCommit,
    HistorySnapshot,
    ImportRecord,
    MessageIdConflict,
    MetadataEntry,
    RangeQuery,
    RecentMessageRecord,
    RecentQuery,
    SessionInfo,
    StoreClosed,
    StoredMessage,
    StoredRecord,
    decode_metadata,
)
from aalis_schema_message import Message
from psycopg import AsyncConnection
from psycopg.errors import UniqueViolation
from psycopg_pool import AsyncConnectionPool

from aalis_plugin_memory_postgres.codec import (
    INT64_MAX,
    Row,
    decode_messages,
    decode_messages_indexed,
    encode_message,
    escape,
    message_columns,
    unescape,
)
from aalis_plugin_memory_postgres.config import PostgresConfig
from aalis_plugin_memory_postgres.exact import ExactSql, archive_exact, message_id
from aalis_plugin_memory_postgres.leases import LeaseSql, PostgresLeases
from aalis_plugin_memory_postgres.redaction import Redactor
from aalis_plugin_memory_postgres.schema import migrate
from aalis_plugin_memory_postgres.sql import StoreSql

Limit = int | float


class PostgresUnavailable(BackendUnavailable):
    """The server cannot be reached or its schema cannot be prepared (URI redacted)."""


def _everything(limit: Limit) -> bool:
    return limit == math.inf or limit > INT64_MAX


def _sql_limit(limit: Limit) -> int | None:
    """PostgreSQL's ``LIMIT NULL`` is no limit."""
    return None if _everything(limit) else int(limit)


def _escaped(values: Iterable[str]) -> list[str]:
    return [escape(value) for value in dict.fromkeys(values)]


#: The unique index on message ids (schema.py): its violation is a ``MessageIdConflict``.
_ID_INDEX = "messages_id"


def _id_conflict(exc: UniqueViolation) -> Exception:
    """A duplicate message id as the contract names it; any other violation as it is."""
    if exc.diag.constraint_name != _ID_INDEX:
        return exc
    return MessageIdConflict(f"a message id is already stored: {exc.diag.message_detail}")


class PostgresMemory(PostgresLeases, CompleteMemoryBackend):
    """Per-session history and metadata in one PostgreSQL schema, shared by any number of hosts.

    ``await PostgresMemory.connect(PostgresConfig(uri=...))`` opens the pool and creates or
    migrates the schema; ``await store.close()`` closes the pool. Arguments are checked by
    ``CompleteMemoryBackend``.
    """

    def __init__(
        self, pool: AsyncConnectionPool[Any], config: PostgresConfig, *, logger: Any = None
    ) -> None:
        self._pool: AsyncConnectionPool[Any] | None = pool
        self.config = config
        self.schema = config.schema
        self.range_query_limit = config.range_query_limit
        self.cross_session_max_limit = config.cross_session_max_limit
        self._sql = StoreSql(config.schema)
        self._exact = ExactSql(config.schema)
        self._lease_sql = LeaseSql(config.schema)
        self._redactor = Redactor(config.uri)
        self._logger = (
            logger if logger is not None else structlog.get_logger("aalis.memory-postgres")
        )

    @classmethod
    async def connect(cls, config: PostgresConfig, *, logger: Any = None) -> PostgresMemory:
        """Open a pool on ``config.uri`` and prepare the schema.

        Fails with one ``PostgresUnavailable`` (URI redacted) after about
        ``connect_timeout_s`` when the server cannot be reached, and when it refuses the
        schema. Migrating is not bounded by that timeout: a migration of a large table (or
        another host's, which this one waits for) may take minutes, and giving up would roll
        it back only to start it again at the next start.
        """
        if config.uri is None:
            raise ValueError("PostgresConfig.uri is not set")
        redactor = Redactor(config.uri)
        timeout = float(config.connect_timeout_s)
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            config.uri,
            min_size=config.min_pool_size,
            max_size=config.max_pool_size,
            kwargs={
                "autocommit": True,
                "connect_timeout": config.connect_timeout_s,
                "application_name": "aalis-memory-postgres",
            },
            timeout=timeout,
            name="aalis-memory-postgres",
            open=False,
        )
        where = f"{redactor.display} (schema {config.schema!r})"
        step = "connect"
        try:
            async with asyncio.timeout(timeout + 1):
                await pool.open(wait=config.min_pool_size > 0, timeout=timeout)
                conn = await pool.getconn(timeout=timeout)
            step = "schema"
            try:
                await migrate(conn, config.schema)
            finally:
                await pool.putconn(conn)
        except Exception as exc:  # any failure here means "this server is not usable"
            await pool.close()
            what = "cannot reach PostgreSQL" if step == "connect" else "cannot prepare the schema"
            reason = redactor(f"{type(exc).__name__}: {exc}".strip())
            raise PostgresUnavailable(f"{what} at {where}: {reason}") from None
        except BaseException:
            await pool.close()
            raise
        return cls(pool, config, logger=logger)

    def __repr__(self) -> str:
        state = "open" if self._pool is not None else "closed"
        return f"PostgresMemory({self._redactor.display!r}, schema={self.schema!r}, {state})"

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> PostgresMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def pool(self) -> AsyncConnectionPool[Any]:
        """The connection pool; for diagnostics, tests and benchmarks (EXPLAIN, raw rows)."""
        if self._pool is None:
            raise StoreClosed("the PostgreSQL memory store is closed")
        return self._pool

    def _corrupt(self, session_id: str) -> Any:
        def report(index: int, error: str) -> None:
            self._logger.warning(
                "skipped an unreadable message row",
                session_id=session_id,
                position=index,
                error=error,
            )

        return report

    async def _fetch(self, sql: str, params: Any) -> list[tuple[Any, ...]]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(sql, params)
            rows: list[tuple[Any, ...]] = await cursor.fetchall()
            return rows

    # -- messages ----------------------------------------------------------------------

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
            raise _id_conflict(exc) from None

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        sid = escape(session_id)
        if _everything(limit):
            rows = await self._fetch(self._sql.history_all, (sid,))
        else:
            rows = await self._fetch(self._sql.history, {"sid": sid, "limit": int(limit)})
        return decode_messages([row[0] for row in rows], self._corrupt(session_id))

    async def _count_history(self, session_id: str) -> int:
        rows = await self._fetch(self._sql.count, (escape(session_id),))
        return int(rows[0][0]) if rows else 0

    async def _newest(
        self, conn: AsyncConnection[Any], sid: str, limit: Limit
    ) -> list[tuple[int, int, str]]:
        """``(seq, ts, data)`` of the newest ``limit`` rows, archived or not, ascending."""
        if _everything(limit):
            cursor = await conn.execute(self._sql.all_rows, (sid,))
            return [(seq, ts, data) for seq, ts, data, _archived in await cursor.fetchall()]
        cursor = await conn.execute(self._sql.newest, {"sid": sid, "limit": int(limit)})
        rows: list[tuple[int, int, str]] = await cursor.fetchall()
        rows.reverse()
        return rows

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
            cursor = await conn.execute(sql.active_span, (sid, _sql_limit(count)))
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

    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        filters = []
        params: dict[str, Any] = {
            "sid": escape(session_id),
            "start": query.from_ts,
            "end": query.to_ts,
            "limit": self.config.range_query_limit,
        }
        if query.roles:
            filters.append("AND role = ANY(%(roles)s)")
            params["roles"] = _escaped(query.roles)
        if query.exclude_kinds:
            filters.append("AND (kind IS NULL OR kind <> ALL(%(kinds)s))")
            params["kinds"] = _escaped(query.exclude_kinds)
        part = self._sql.range_part
        text = " ".join(filters)
        active = part.format(archived="NOT archived", filters=text)
        archived = part.format(archived="archived", filters=text)
        sql = (
            f"SELECT data FROM (({active}) UNION ALL ({archived})) AS r"
            " ORDER BY ts, seq LIMIT %(limit)s"
        )
        rows = await self._fetch(sql, params)
        return decode_messages([row[0] for row in rows], self._corrupt(session_id))

    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        filters: list[str] = []
        params: dict[str, Any] = {"roles": _escaped(query.roles), "limit": query.limit}
        if query.kinds is not None:
            filters.append("AND kind = ANY(%(kinds)s)")
            params["kinds"] = _escaped(query.kinds)
        if query.exclude_kinds:
            filters.append("AND (kind IS NULL OR kind <> ALL(%(exclude_kinds)s))")
            params["exclude_kinds"] = _escaped(query.exclude_kinds)
        if query.since_ts is not None:
            filters.append("AND ts >= %(since)s")
            params["since"] = query.since_ts
        if query.platform is not None:
            filters.append("AND platform = %(platform)s")
            params["platform"] = escape(query.platform)
        if query.exclude_session_ids:
            filters.append("AND session_id <> ALL(%(skip)s)")
            params["skip"] = _escaped(query.exclude_session_ids)
        rows = await self._fetch(self._sql.recent.format(filters=" ".join(filters)), params)
        rows.reverse()
        decoded = decode_messages_indexed([row[1] for row in rows], self._corrupt("*"))
        return [RecentMessageRecord(unescape(rows[i][0]), message) for i, message in decoded]

    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        sid = escape(session_id)
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(self._sql.lock_session, (sid,))
            rows = await self._newest(conn, sid, recent_limit)
            decoded = decode_messages_indexed([row[2] for row in rows], self._corrupt(session_id))
            updates: list[tuple[str, int]] = []
            for index, message in decoded:
                content = message.content
                if isinstance(content, str) and old in content:
                    seq, ts, _data = rows[index]
                    changed = Message.from_json(
                        {**message.to_json(), "content": content.replace(old, new)}
                    )
                    updates.append((encode_message(changed, ts), seq))
            if updates:
                async with conn.cursor() as cursor:
                    await cursor.executemany(self._sql.update_data, updates)
        return len(updates)

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        return await self._delete_where(self._sql.delete_by_ts, session_id, list(timestamps))

    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        return await self._delete_where(self._sql.delete_by_ids, session_id, list(ids))

    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        rows = await self._fetch(self._sql.by_ids, (list(ids),))
        decoded = decode_messages_indexed([row[2] for row in rows], self._corrupt("*"))
        return [
            StoredRecord(
                session_id=unescape(rows[i][0]), message=message, archived=bool(rows[i][1])
            )
            for i, message in decoded
        ]

    async def _delete_where(self, delete: str, session_id: str, values: list[Any]) -> int:
        """Run ``delete`` (``session_id``, ``values``) and keep the session's counters right."""
        sid = escape(session_id)
        sql = self._sql
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(sql.lock_session, (sid,))
            cursor = await conn.execute(delete, (sid, values))
            deleted = await cursor.fetchall()
            if not deleted:
                return 0
            archived = sum(1 for was_archived, _control in deleted if was_archived)
            active = len(deleted) - archived
            conversation = sum(
                1 for was_archived, control in deleted if not (was_archived or control)
            )
            cursor = await conn.execute(sql.last_ts, {"sid": sid})
            row = await cursor.fetchone()
            last = None if row is None else row[0]
            if last is None:
                await conn.execute(sql.clear_stats, (sid,))
            else:
                await conn.execute(
                    sql.subtract_stats,
                    {
                        "sid": sid,
                        "active": active,
                        "conv": conversation,
                        "archived": archived,
                        "last": last,
                    },
                )
        return len(deleted)

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
            raise _id_conflict(exc) from None
        return len(rows)

    # -- metadata ----------------------------------------------------------------------

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(self._sql.put, (escape(namespace), escape(key), text, updated_at))

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        rows = await self._fetch(self._sql.get, (escape(namespace), escape(key)))
        if not rows:
            return None
        data = decode_metadata(rows[0][0])
        if data is None:
            self._logger.warning(
                "unreadable metadata entry read as None", namespace=namespace, key=key
            )
        return data

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        entries: list[MetadataEntry] = []
        for key, text, updated_at in await self._fetch(self._sql.list, (escape(namespace),)):
            data = decode_metadata(text)
            if data is not None:
                entries.append(
                    MetadataEntry(key=unescape(key), data=data, updated_at=int(updated_at))
                )
        return entries

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        rows = await self._fetch(self._sql.keys, (escape(namespace),))
        return [unescape(row[0]) for row in rows]

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(self._sql.delete, (escape(namespace), escape(key)))

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        # Consecutive operations of one kind go as one pipelined executemany; order is kept.
        runs: list[tuple[str, list[tuple[Any, ...]]]] = []
        for op, namespace, key, text in ops:
            ns, k = escape(namespace), escape(key)
            params: tuple[Any, ...] = (ns, k, text, updated_at) if op == "put" else (ns, k)
            if runs and runs[-1][0] == op:
                runs[-1][1].append(params)
            else:
                runs.append((op, [params]))
        async with (
            self.pool.connection() as conn,
            conn.transaction(),
            conn.cursor() as cursor,
        ):
            for op, batch in runs:
                await cursor.executemany(self._sql.put if op == "put" else self._sql.delete, batch)

    # -- exact archiving (aalis_api_memory._exact; the SQL is in exact.py) -----------------

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
            raise _id_conflict(exc) from None

    async def _list_namespaces(self) -> list[str]:
        rows = await self._fetch(self._sql.namespaces, ())
        return [unescape(row[0]) for row in rows]


__all__ = ["PostgresMemory", "PostgresUnavailable", "StoreClosed"]
