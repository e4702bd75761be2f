"""Leases on SQLite (the contract's ``Leases`` group, aalis_api_memory._leases).

A lease is a row of ``aalis_leases (name, holder, expires_at)``. Taking one is a single
``BEGIN IMMEDIATE`` transaction (``transaction.py``): the write lock is held from the read to
the write, so of two processes trying at once, one commits first and the other then sees its
row. The upsert writes only when the lease is free, expired or already the holder's; its row
count says whether it did.

The table is created on first use (``CREATE TABLE IF NOT EXISTS``, in the same transaction)
rather than by a schema migration: leases are short-lived coordination state, not data; a file
without the table reads as "no lease held", and an older plugin opening the file ignores it.
Expiry uses the caller's clock (epoch ms), passed down by ``WithLeases``; the processes
sharing a file share a machine, so they share the clock.
"""

from __future__ import annotations

import sqlite3

from aalis_plugin_memory_sqlite._base import SqliteBase
from aalis_plugin_memory_sqlite._transaction import transaction

TABLE = "aalis_leases"

_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    " name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL"
    ") WITHOUT ROWID"
)
_TAKE = (
    f"INSERT INTO {TABLE} (name, holder, expires_at) VALUES (?, ?, ?)"
    " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at"
    f" WHERE {TABLE}.holder = excluded.holder OR {TABLE}.expires_at <= ?"
)
_GIVE_UP = f"DELETE FROM {TABLE} WHERE name = ? AND holder = ?"


def acquire_lease(conn: sqlite3.Connection, name: str, holder: str, ttl_ms: int, now: int) -> bool:
    """Take, take over (expired) or renew (same holder) lease ``name``; whether it did."""
    with transaction(conn):
        conn.execute(_CREATE)
        cursor = conn.execute(_TAKE, (name, holder, now + ttl_ms, now))
        return cursor.rowcount == 1


def release_lease(conn: sqlite3.Connection, name: str, holder: str) -> bool:
    """Remove lease ``name`` when ``holder`` holds it; whether it did."""
    with transaction(conn):
        conn.execute(_CREATE)
        return conn.execute(_GIVE_UP, (name, holder)).rowcount == 1


class SqliteLeases(SqliteBase):
    """The ``Leases`` storage methods (a mixin of ``SqliteMemory``)."""

    async def _acquire_lease(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        return await self._on_connection(acquire_lease, name, holder, ttl_ms, now)

    async def _release_lease(self, name: str, holder: str) -> bool:
        return await self._on_connection(release_lease, name, holder)


__all__ = ["TABLE", "SqliteLeases", "acquire_lease", "release_lease"]
