"""The memory contract's conformance kit on a real PostgreSQL: every test runs, none skipped."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from aalis_api_memory.testing import MemoryServiceConformance
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
from aalis_plugin_memory_postgres.codec import escape
from aalis_plugin_memory_postgres.schema import quote_schema


async def write_raw_metadata(store: PostgresMemory, namespace: str, key: str, raw: str) -> None:
    async with store.pool.connection() as conn:
        await conn.execute(
            f"INSERT INTO {quote_schema(store.schema)}.metadata (namespace, key, data, updated_at)"
            " VALUES (%s, %s, %s, 0) ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data",
            (escape(namespace), escape(key), raw),
        )


class TestPostgresConformance(MemoryServiceConformance):
    @pytest_asyncio.fixture
    async def memory(self, pg_config: PostgresConfig) -> AsyncIterator[PostgresMemory]:
        store = await PostgresMemory.connect(pg_config)
        try:
            yield store
        finally:
            await store.close()

    async def corrupt_metadata(self, memory: Any, namespace: str, key: str, raw_text: str) -> None:
        await write_raw_metadata(memory, namespace, key, raw_text)
