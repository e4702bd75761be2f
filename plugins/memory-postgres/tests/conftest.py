"""A PostgreSQL for the tests: ``AALIS_TEST_POSTGRES_URI`` when set, else one started here.

The server comes from the repository's launcher, ``aalis_test_support.postgres.shared_server``
(shared with the other suites), started once for the whole run. Every test gets a schema of its own on it
(fresh, empty tables), dropped when the test ends; the conformance kit uses one schema for all
its tests and empties it before each (``test_conformance.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
from aalis_test_support.postgres import TestServer, fresh_schema, shared_server


@pytest.fixture(scope="session")
def pg_server() -> TestServer:
    # The launcher is in this plugin's test extra: a missing server is an error, not a skip.
    return shared_server()


@pytest.fixture
def pg_config(pg_server: TestServer) -> Iterator[PostgresConfig]:
    with fresh_schema(pg_server) as schema:
        yield PostgresConfig(uri=pg_server.uri, schema=schema, min_pool_size=1, max_pool_size=4)


@pytest.fixture
async def memory(pg_config: PostgresConfig) -> AsyncIterator[PostgresMemory]:
    store = await PostgresMemory.connect(pg_config)
    try:
        yield store
    finally:
        await store.close()
