"""The memory contract's conformance kit on a real PostgreSQL: every test runs, none skipped
(``implements = "all"``: a missing optional method fails instead of skipping)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from aalis_api_memory_conformance import MemoryServiceConformance
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
from aalis_plugin_memory_postgres._codec import escape
from aalis_plugin_memory_postgres._schema import quote_schema
from aalis_test_support.postgres import TestServer, fresh_schema


async def write_raw_metadata(store: PostgresMemory, namespace: str, key: str, raw: str) -> None:
    async with store.pool.connection() as conn:
        await conn.execute(
            f"INSERT INTO {quote_schema(store.schema)}.metadata (namespace, key, data, updated_at)"
            " VALUES (%s, %s, %s, 0) ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data",
            (escape(namespace), escape(key), raw),
        )


@pytest.fixture(scope="module")
def kit_config(pg_server: TestServer) -> Iterator[PostgresConfig]:
    """One schema for the kit's ~350 tests, emptied before each: creating and dropping a schema
    per test (tables, indexes) would cost twice as long as the tests themselves."""
    with fresh_schema(pg_server, "kit") as schema:
        yield PostgresConfig(uri=pg_server.uri, schema=schema, min_pool_size=1, max_pool_size=4)


class TestPostgresConformance(MemoryServiceConformance):
    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self, kit_config: PostgresConfig) -> AsyncIterator[PostgresMemory]:
        store = await PostgresMemory.connect(kit_config)
        s = quote_schema(store.schema)
        try:
            # A fresh store: empty tables and the insertion sequence back at its start.
            async with store.pool.connection() as conn:
                await conn.execute(
                    f"TRUNCATE {s}.messages, {s}.session_stats, {s}.metadata, {s}.leases"
                    " RESTART IDENTITY"
                )
            yield store
        finally:
            await store.close()

    async def corrupt_metadata(
        self, memory: PostgresMemory, namespace: str, key: str, raw_text: str
    ) -> None:
        await write_raw_metadata(memory, namespace, key, raw_text)
