"""The plugin in a real host: disabled without a URI, a provider with one, one clear error
(redacted, bounded in time) when the server cannot be reached."""

from __future__ import annotations

import json
import socket
import time

import pytest
from aalis_api_memory import CONTEXT_CLEAR_TYPE, memory
from aalis_plugin_memory_postgres import (
    MemoryPostgres,
    PostgresConfig,
    PostgresMemory,
    PostgresUnavailable,
)
from aalis_plugin_memory_postgres._store import StoreClosed
from aalis_schema_message import Message

from aalis_core.testing import capture_logs, running_host

PASSWORD = "s3cret-Pa55word"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def info(host, name: str = "memory-postgres"):
    [found] = [p for p in host.plugins() if p.name == name]
    return found


async def test_without_uri_the_plugin_is_disabled(tmp_path):
    async with running_host(plugins=[MemoryPostgres()], data_dir=tmp_path) as host:
        plugin = info(host)
        assert plugin.state == "disabled"
        assert plugin.error == "no uri configured"
        assert host.capability(memory).present is False


async def test_with_uri_it_provides_memory_and_stop_closes_the_pool(tmp_path, pg_config):
    table = {"uri": pg_config.uri, "schema": pg_config.schema, "max_pool_size": 2}
    plugin = MemoryPostgres()
    with capture_logs() as logs:
        async with running_host(
            plugins=[plugin], config={"plugins": {"memory-postgres": table}}, data_dir=tmp_path
        ) as host:
            assert info(host).state == "active", info(host).error
            handle = host.capability(memory)
            assert handle.provider == "memory-postgres"
            await handle.use.save_message("s", Message(role="user", content="hi", timestamp=1))
            assert [m.content for m in await handle.use.get_history("s")] == ["hi"]
            types = host.collect_contributions("memory_clear_types")
            assert ("memory-postgres", CONTEXT_CLEAR_TYPE) in types
            store = plugin.store
            assert store is not None
    assert plugin.store is None
    with pytest.raises(StoreClosed):
        await store.get_history("s")
    connected = [line for line in logs.lines if line.get("event") == "connected"]
    assert connected
    assert connected[0]["schema"] == pg_config.schema
    assert connected[0]["pool"] == "1-2"


async def test_unreachable_server_is_one_redacted_error_within_the_timeout(tmp_path):
    port = closed_port()
    table = {
        "uri": f"postgresql://alice:{PASSWORD}@127.0.0.1:{port}/agents",
        "connect_timeout_s": 1,
    }
    with capture_logs() as logs:
        started = time.monotonic()
        async with running_host(
            plugins=[MemoryPostgres()],
            config={"plugins": {"memory-postgres": table}},
            data_dir=tmp_path,
        ) as host:
            elapsed = time.monotonic() - started
            plugin = info(host)
            assert plugin.state == "error"
            assert host.capability(memory).present is False
    assert elapsed < 1 + 1 + 2, elapsed  # the connect timeout, its slack, host overhead
    assert "cannot reach PostgreSQL at postgresql://alice:***@127.0.0.1" in plugin.error
    assert PASSWORD not in plugin.error
    assert PASSWORD not in logs.text
    assert any("alice:***@" in json.dumps(line) for line in logs.lines)


async def test_a_password_in_the_query_string_is_masked_too():
    port = closed_port()
    config = PostgresConfig(
        uri=f"postgresql://bob@127.0.0.1:{port}/agents?password={PASSWORD}&sslmode=disable",
        connect_timeout_s=1,
    )
    with pytest.raises(PostgresUnavailable) as caught:
        await PostgresMemory.connect(config)
    assert PASSWORD not in str(caught.value)
    assert "password=***" in str(caught.value)
    assert PASSWORD not in repr(config)


async def test_repr_never_shows_the_password(pg_config):
    store = await PostgresMemory.connect(pg_config)
    try:
        assert "PostgresMemory(" in repr(store)
        assert pg_config.schema in repr(store)
    finally:
        await store.close()
