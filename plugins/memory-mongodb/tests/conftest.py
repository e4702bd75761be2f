"""A MongoDB for the tests: a real server from ``AALIS_TEST_MONGODB_URI``, else nx-27017.

The server comes from the repository's launcher, ``aalis_test_support.mongodb.wire_server``
(shared with the other suites and the benchmarks): nx-27017 on a free loopback port with in-memory databases, stopped
at the end, so ``./scripts/test`` needs no MongoDB installed. With ``AALIS_TEST_MONGODB_URI`` set
the tests run against that server instead, in a database of their own (``aalis_test_<random>``)
that is dropped at the end.

Every test gets its own collection prefix in that database (fresh, empty collections), and its
collections are dropped when it ends.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory
from aalis_test_support.mongodb import TestServer, wire_server
from pymongo import MongoClient

_prefixes = itertools.count(1)


@pytest.fixture(scope="session")
def mongo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestServer]:
    # The launcher is in this plugin's test extra: a missing server is an error, not a skip.
    with wire_server(tmp_path_factory.mktemp("nx-27017")) as server:
        yield server


@pytest.fixture
def mongo_config(mongo_server: TestServer) -> Iterator[MongoConfig]:
    """A config with a fresh collection prefix; the test's collections are dropped after."""
    prefix = f"t{next(_prefixes)}_{uuid.uuid4().hex[:6]}_"
    yield MongoConfig(
        uri=mongo_server.uri,
        database=mongo_server.database,
        collection_prefix=prefix,
        connect_timeout_ms=5000,
        server_selection_timeout_ms=5000,
    )
    client: MongoClient[dict[str, Any]] = MongoClient(
        mongo_server.uri, serverSelectionTimeoutMS=5000
    )
    try:
        db = client[mongo_server.database]
        for name in db.list_collection_names():
            if name.startswith(prefix):
                db.drop_collection(name)
    finally:
        client.close()


@pytest.fixture
async def memory(mongo_config: MongoConfig) -> AsyncIterator[MongoMemory]:
    """A fresh, connected store (the fixture the conformance kit asks for)."""
    store = await MongoMemory.connect(mongo_config)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def raw_db(mongo_server: TestServer) -> Iterator[Any]:
    """A synchronous handle on the run's database, to look at or tamper with documents."""
    client: MongoClient[dict[str, Any]] = MongoClient(
        mongo_server.uri, serverSelectionTimeoutMS=5000
    )
    try:
        yield client[mongo_server.database]
    finally:
        client.close()
