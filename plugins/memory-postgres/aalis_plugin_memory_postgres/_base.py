"""What the job modules of ``PostgresMemory`` share: the pool, the SQL, the row helpers.

``PostgresBase`` holds the store's state (the pool, the configured schema's SQL, the logger)
and the helpers several jobs use: one-statement reads (``_fetch``), the newest rows of a session
(``_newest``), a delete that keeps the session's counters right (``_delete_where``). Each job of
the contract is a mixin over it (``history.py``, ``queries.py``, ``identity.py``,
``transfer.py``, ``exact.py``, ``metadata.py``, ``leases.py``); ``store.py`` assembles them
and opens the pool. The layout is the same in every memory backend
(docs/backends/implementing.md, "One layout for every backend").
"""

from __future__ import annotations

import math
from typing import Any

from aalis_api_memory import CompleteMemoryBackend, StoreClosed
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from aalis_core import get_logger
from aalis_plugin_memory_postgres._codec import INT64_MAX, escape
from aalis_plugin_memory_postgres._config import PostgresConfig
from aalis_plugin_memory_postgres._redaction import Redactor
from aalis_plugin_memory_postgres._sql import StoreSql

Limit = int | float


def everything(limit: Limit) -> bool:
    """Whether ``limit`` asks for every row (infinite, or past what a BIGINT counts)."""
    return limit == math.inf or limit > INT64_MAX


def sql_limit(limit: Limit) -> int | None:
    """PostgreSQL's ``LIMIT NULL`` is no limit."""
    return None if everything(limit) else int(limit)


class PostgresBase(CompleteMemoryBackend):
    """The state and shared helpers of ``PostgresMemory`` (its job mixins build on it)."""

    def __init__(
        self, pool: AsyncConnectionPool[Any], config: PostgresConfig, *, logger: Any = None
    ) -> None:
        self._pool: AsyncConnectionPool[Any] | None = pool
        self.config = config
        self.schema = config.schema
        self.range_query_limit = config.range_query_limit
        self.cross_session_max_limit = config.cross_session_max_limit
        self._sql = StoreSql(config.schema)
        self._redactor = Redactor(config.uri)
        self._logger = logger if logger is not None else get_logger("memory-postgres")

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

    async def _newest(
        self, conn: AsyncConnection[Any], sid: str, limit: Limit
    ) -> list[tuple[int, int, str]]:
        """``(seq, ts, data)`` of the newest ``limit`` rows, archived or not, ascending."""
        if everything(limit):
            cursor = await conn.execute(self._sql.all_rows, (sid,))
            return [(seq, ts, data) for seq, ts, data, _archived in await cursor.fetchall()]
        cursor = await conn.execute(self._sql.newest, {"sid": sid, "limit": int(limit)})
        rows: list[tuple[int, int, str]] = await cursor.fetchall()
        rows.reverse()
        return rows

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


__all__ = ["Limit", "PostgresBase", "everything", "sql_limit"]
