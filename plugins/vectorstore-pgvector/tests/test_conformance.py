"""The vectorstore kit on a real PostgreSQL + pgvector (the run's one server), with no skip."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aalis_api_vectorstore.testing import VectorStoreConformance
from aalis_plugin_memory_postgres.testing import TestServer, fresh_schema, shared_server
from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore


@pytest.fixture(scope="session")
def pg_server() -> TestServer:
    return shared_server()


class TestPgvectorConformance(VectorStoreConformance):
    # HNSW is approximate: the kit's exactness test asks for recall against brute force.
    exact = False

    @pytest_asyncio.fixture
    async def vectorstore(self, pg_server: TestServer) -> AsyncIterator[PgvectorStore]:
        with fresh_schema(pg_server, "v") as schema:
            store = await PgvectorStore.connect(
                PgvectorConfig(uri=pg_server.uri, schema=schema, max_pool_size=4)
            )
            try:
                yield store
            finally:
                await store.close()
