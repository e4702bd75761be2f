"""The contract's conformance kit on memory-sqlite: every test runs, none is skipped
(``implements = "all"`` makes a missing optional method fail instead of skip)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from aalis_api_memory import HeldMemory
from aalis_api_memory_conformance import MemoryServiceConformance
from aalis_plugin_memory_sqlite import SqliteMemory


async def write_raw_metadata(store: SqliteMemory, namespace: str, key: str, raw_text: str) -> None:
    def write(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO metadata (namespace, key, data, updated_at) VALUES (?, ?, ?, 0)",
            (namespace, key, raw_text),
        )

    await store.run_on_connection(write)


class TestSqliteConformance(MemoryServiceConformance):
    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self, tmp_path: Path) -> AsyncIterator[SqliteMemory]:
        async with SqliteMemory(tmp_path / "kit.db") as store:
            yield store

    async def corrupt_metadata(
        self, memory: SqliteMemory, namespace: str, key: str, raw_text: str
    ) -> None:
        await write_raw_metadata(memory, namespace, key, raw_text)


class TestSqliteThroughHeldMemory(MemoryServiceConformance):
    """As the host hands it out: wrapped in the ``memory`` capability's adapter."""

    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self, tmp_path: Path) -> AsyncIterator[HeldMemory]:
        async with SqliteMemory(tmp_path / "kit.db") as store:
            yield HeldMemory(store)

    async def corrupt_metadata(
        self, memory: HeldMemory, namespace: str, key: str, raw_text: str
    ) -> None:
        await write_raw_metadata(memory.inner, namespace, key, raw_text)
