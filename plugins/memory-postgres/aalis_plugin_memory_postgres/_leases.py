"""Leases on PostgreSQL (the contract's ``Leases`` group, aalis_api_memory._leases).

A lease is a row of ``leases (name, holder, expires_at)`` (migration 0002). Taking one is ONE
statement, ``INSERT ... ON CONFLICT (name) DO UPDATE ... WHERE <expired or same holder>``: the
primary key serialises two processes inserting the same name (the second waits for the first
to commit, then evaluates the ``WHERE`` against its row), so the decision and the write are
atomic without an explicit lock; ``RETURNING`` says whether a row was written.

Expiry uses the server's clock (``now()``, one statement, one transaction), never the
callers': processes on different machines agree on it whatever their own clocks say. Names and
holders go through ``codec.escape`` like every other text (``text`` cannot hold NUL).
"""

from __future__ import annotations

import functools
from typing import Any

from psycopg import AsyncConnection

from aalis_plugin_memory_postgres._base import PostgresBase
from aalis_plugin_memory_postgres._codec import escape
from aalis_plugin_memory_postgres._schema import quote_schema


class LeaseSql:
    """The statements of leases, with the schema name filled in once."""

    def __init__(self, schema: str) -> None:
        table = f"{quote_schema(schema)}.leases"
        self.take = (
            f"INSERT INTO {table} AS l (name, holder, expires_at)"
            " VALUES (%(name)s, %(holder)s, now() + %(ttl)s * interval '1 millisecond')"
            " ON CONFLICT (name) DO UPDATE"
            " SET holder = excluded.holder, expires_at = excluded.expires_at"
            " WHERE l.holder = excluded.holder OR l.expires_at <= now()"
            " RETURNING 1"
        )
        self.give_up = f"DELETE FROM {table} WHERE name = %s AND holder = %s RETURNING 1"


async def acquire_lease(
    conn: AsyncConnection[Any], sql: LeaseSql, name: str, holder: str, ttl_ms: int
) -> bool:
    """Take, take over (expired) or renew (same holder) lease ``name``; whether it did."""
    cursor = await conn.execute(
        sql.take, {"name": escape(name), "holder": escape(holder), "ttl": ttl_ms}
    )
    return await cursor.fetchone() is not None


async def release_lease(conn: AsyncConnection[Any], sql: LeaseSql, name: str, holder: str) -> bool:
    """Remove lease ``name`` when ``holder`` holds it; whether it did."""
    cursor = await conn.execute(sql.give_up, (escape(name), escape(holder)))
    return await cursor.fetchone() is not None


class PostgresLeases(PostgresBase):
    """The ``Leases`` storage methods (a mixin of ``PostgresMemory``)."""

    @functools.cached_property
    def _lease_sql(self) -> LeaseSql:
        return LeaseSql(self.schema)

    async def _acquire_lease(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        # ``now`` (the caller's clock) is not used: the server's clock decides expiry.
        async with self.pool.connection() as conn:
            return await acquire_lease(conn, self._lease_sql, name, holder, ttl_ms)

    async def _release_lease(self, name: str, holder: str) -> bool:
        async with self.pool.connection() as conn:
            return await release_lease(conn, self._lease_sql, name, holder)


__all__ = ["LeaseSql", "PostgresLeases", "acquire_lease", "release_lease"]
