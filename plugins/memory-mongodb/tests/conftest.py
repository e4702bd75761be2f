"""A MongoDB for the tests: a real server from ``AALIS_TEST_MONGODB_URI``, else nx-27017.

nx-27017 (pinned in the test extra) is a MongoDB wire-protocol server on SQLite. The session
fixture starts it on a free loopback port with in-memory databases, waits until it answers a
ping and stops it at the end, so ``./scripts/test`` needs no MongoDB installed. With
``AALIS_TEST_MONGODB_URI`` set the tests run against that server instead, in a database of
their own (``aalis_test_<random>``) that is dropped at the end.

Every test gets its own collection prefix in that database (fresh, empty collections), and its
collections are dropped when it ends.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory
from pymongo import MongoClient
from pymongo.errors import PyMongoError

ENV_URI = "AALIS_TEST_MONGODB_URI"
_STARTUP_SECONDS = 30
_prefixes = itertools.count(1)


@attrs.frozen
class TestServer:
    """Where the tests' MongoDB is: ``uri``, the run's ``database``, and what it is."""

    __test__ = False  # not a test class, despite the name

    uri: str
    database: str
    kind: str  # "nx-27017" or "external"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _nx_command() -> list[str]:
    script = Path(sys.executable).with_name("nx-27017")
    if script.exists():
        return [str(script)]
    found = shutil.which("nx-27017")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from nx_27017.nx_27017 import main; sys.exit(main())"]


def _pings(uri: str, timeout_ms: int = 500) -> bool:
    client: MongoClient[dict[str, Any]] = MongoClient(
        uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms
    )
    try:
        client.admin.command("ping")
        return True
    except PyMongoError:
        return False
    finally:
        client.close()


def _start_nx(workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    log = workdir / "nx-27017.log"
    for _attempt in range(3):  # another process may grab the free port in between
        port = _free_port()
        with (workdir / "nx-27017.out").open("ab") as out:
            proc = subprocess.Popen(
                [
                    *_nx_command(),
                    "--host", "127.0.0.1",
                    "--port", str(port),
                    "--data-dir", "memory",  # one isolated in-memory SQLite per database
                    "--pid-file", str(workdir / "nx-27017.pid"),
                    "--log-file", str(log),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=workdir,
            )
        uri = f"mongodb://127.0.0.1:{port}/"
        deadline = time.monotonic() + _STARTUP_SECONDS
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if _pings(uri):
                return proc, uri
            time.sleep(0.1)
        _stop(proc)
    output = (workdir / "nx-27017.out").read_text(errors="replace")[-2000:]
    raise RuntimeError(f"nx-27017 did not answer a ping within {_STARTUP_SECONDS} s:\n{output}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def mongo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestServer]:
    database = f"aalis_test_{uuid.uuid4().hex[:12]}"
    external = os.environ.get(ENV_URI)
    if external:
        yield TestServer(external, database, "external")
        client: MongoClient[dict[str, Any]] = MongoClient(external, serverSelectionTimeoutMS=5000)
        try:
            client.drop_database(database)
        finally:
            client.close()
        return
    proc, uri = _start_nx(tmp_path_factory.mktemp("nx-27017"))
    try:
        yield TestServer(uri, database, "nx-27017")
    finally:
        _stop(proc)


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
    client: MongoClient[dict[str, Any]] = MongoClient(mongo_server.uri, serverSelectionTimeoutMS=5000)
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
    client: MongoClient[dict[str, Any]] = MongoClient(mongo_server.uri, serverSelectionTimeoutMS=5000)
    try:
        yield client[mongo_server.database]
    finally:
        client.close()
