"""Fixtures shared by the memory-sqlite tests: a fresh store on a temporary file, raw access."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from aalis_plugin_memory_sqlite import SqliteMemory

T0 = 1_700_000_000_000


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memory.db"


@pytest_asyncio.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteMemory]:
    memory = SqliteMemory(db_path)
    await memory.open()
    try:
        yield memory
    finally:
        await memory.close()


@pytest.fixture
def raw(db_path: Path) -> Iterator[Callable[[], sqlite3.Connection]]:
    """``raw()`` opens a plain sqlite3 connection on the store's file (closed after the test)."""
    opened: list[sqlite3.Connection] = []

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(db_path, isolation_level=None, timeout=10)
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


@pytest.fixture
def stats_match_rows(raw: Callable[[], sqlite3.Connection]) -> Callable[[], None]:
    """Assert that the per-session counters equal a recount of the message rows."""

    def check() -> None:
        conn = raw()
        counters = conn.execute(
            "SELECT session_id, active, active_conv, archived, last_ts FROM session_stats ORDER BY 1"
        ).fetchall()
        recount = conn.execute(
            "SELECT session_id, sum(archived = 0), sum(archived = 0 AND control = 0),"
            " sum(archived != 0), max(timestamp) FROM messages GROUP BY session_id ORDER BY 1"
        ).fetchall()
        assert counters == recount

    return check
