"""The plugin in a real host: disabled without a URI, a provider with one, one clear error
(redacted, bounded in time) when the server cannot be reached."""

from __future__ import annotations

import json
import socket
import time

import pytest
from aalis_api_memory import CONTEXT_CLEAR_TYPE, memory
from aalis_plugin_memory_mongodb import MemoryMongodb, MongoConfig, MongoMemory, MongoUnavailable
from aalis_schema_message import Message
from pymongo.errors import InvalidOperation

from aalis_core.testing import capture_logs, running_host

PASSWORD = "s3cret-Pa55word"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def info(host, name: str = "memory-mongodb"):
    [found] = [p for p in host.plugins() if p.name == name]
    return found


async def test_without_uri_the_plugin_is_disabled(tmp_path):
    async with running_host(plugins=[MemoryMongodb()], data_dir=tmp_path) as host:
        plugin = info(host)
        assert plugin.state == "disabled"
        assert plugin.error == "no uri configured"
        assert host.capability(memory).present is False


async def test_with_uri_it_provides_memory(tmp_path, mongo_config):
    table = {
        "uri": mongo_config.uri,
        "database": mongo_config.database,
        "collection_prefix": mongo_config.collection_prefix,
        "server_selection_timeout_ms": 3000,
    }
    plugin = MemoryMongodb()
    with capture_logs() as logs:
        async with running_host(
            plugins=[plugin], config={"plugins": {"memory-mongodb": table}}, data_dir=tmp_path
        ) as host:
            assert info(host).state == "active"
            assert info(host).provides == ["memory"]
            handle = host.capability(memory)
            assert handle.provider == "memory-mongodb"
            await handle.use.save_message("s", Message(role="user", content="hi", timestamp=1))
            assert [m.content for m in await handle.use.get_history("s")] == ["hi"]
            assert hasattr(handle.use, "list_sessions")
            types = host.collect_contributions("memory_clear_types")
            assert ("memory-mongodb", CONTEXT_CLEAR_TYPE) in types
            client = plugin.store._client  # closed by stop below
    assert plugin.store is None
    with pytest.raises(InvalidOperation, match="after close"):
        await client.admin.command("ping")
    connected = [line for line in logs.lines if line.get("event") == "connected"]
    assert connected
    assert connected[0]["database"] == mongo_config.database


async def test_uri_from_environment(tmp_path, mongo_config, monkeypatch):
    monkeypatch.setenv("AALIS_TEST_MONGO_URI_FOR_PLUGIN", mongo_config.uri)
    table = {
        "uri": "${AALIS_TEST_MONGO_URI_FOR_PLUGIN}",
        "database": mongo_config.database,
        "collection_prefix": mongo_config.collection_prefix,
    }
    async with running_host(
        plugins=[MemoryMongodb()], config={"plugins": {"memory-mongodb": table}}, data_dir=tmp_path
    ) as host:
        assert info(host).state == "active", info(host).error


async def test_unreachable_server_is_one_redacted_error_within_the_timeout(tmp_path):
    port = closed_port()
    table = {
        "uri": f"mongodb://alice:{PASSWORD}@127.0.0.1:{port}/?authSource=admin",
        "server_selection_timeout_ms": 300,
        "connect_timeout_ms": 300,
    }
    with capture_logs() as logs:
        started = time.monotonic()
        async with running_host(
            plugins=[MemoryMongodb()],
            config={"plugins": {"memory-mongodb": table}},
            data_dir=tmp_path,
        ) as host:
            elapsed = time.monotonic() - started
            plugin = info(host)
            assert plugin.state == "error"
            assert host.capability(memory).present is False
    # bound: server selection + connect timeout + 1 s of slack, plus host overhead
    assert elapsed < 0.3 + 0.3 + 1 + 1.5, elapsed
    assert "cannot reach MongoDB at mongodb://alice:***@127.0.0.1" in plugin.error
    assert "300 ms" in plugin.error
    assert PASSWORD not in plugin.error
    assert PASSWORD not in logs.text
    assert any("alice:***@" in json.dumps(line) for line in logs.lines)


async def test_connect_error_is_redacted_even_for_a_bare_password(tmp_path):
    port = closed_port()
    config = MongoConfig(
        uri=f"mongodb://bob:{PASSWORD}@127.0.0.1:{port}/",
        server_selection_timeout_ms=200,
        connect_timeout_ms=200,
    )
    with pytest.raises(MongoUnavailable) as caught:
        await MongoMemory.connect(config)
    text = str(caught.value)
    assert "bob:***@" in text
    assert PASSWORD not in text
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__ is True


async def test_invalid_uri_is_a_redacted_error():
    config = MongoConfig(uri=f"mongodb://carol:{PASSWORD}@host:notaport/")
    with pytest.raises(MongoUnavailable, match="invalid MongoDB uri") as caught:
        await MongoMemory.connect(config)
    assert PASSWORD not in str(caught.value)
    assert "carol:***@" in str(caught.value)


def test_config_validation_and_repr():
    config = MongoConfig(uri=f"mongodb://dave:{PASSWORD}@h/")
    assert PASSWORD not in repr(config)
    assert (config.database, config.collection_prefix) == ("aalis", "aalis_")
    assert (config.range_query_limit, config.cross_session_max_limit) == (500, 1000)
    assert MongoConfig().uri is None
    with pytest.raises(ValueError, match="mongodb://"):
        MongoConfig(uri="http://h/")
    with pytest.raises(ValueError, match="refuses"):
        MongoConfig(database="a.b")
    with pytest.raises(ValueError, match="collection_prefix"):
        MongoConfig(collection_prefix="a.b$")
    with pytest.raises(ValueError, match="at least 1"):
        MongoConfig(server_selection_timeout_ms=0)
    with pytest.raises(TypeError):
        MongoConfig(range_query_limit=True)
    with pytest.raises(ValueError, match="at most"):
        MongoConfig(range_query_limit=2**63)


async def test_bad_config_table_fails_the_plugin_naming_the_key(tmp_path):
    from aalis_core._config import ConfigError

    table = {"uri": f"http://eve:{PASSWORD}@h/", "range_query_limit": 0, "colour": "blue"}
    async with running_host(
        plugins=[MemoryMongodb()],
        config={"plugins": {"memory-mongodb": table}},
        data_dir=tmp_path,
    ) as host:
        caught = host.config_errors()["memory-mongodb"]
        info = {i.name: i for i in host.plugins()}["memory-mongodb"]
        assert info.state == "error"
        assert PASSWORD not in (info.error or "")
    assert isinstance(caught, ConfigError)
    text = str(caught)
    assert "range_query_limit" in text
    assert "colour" in text
    assert PASSWORD not in text


async def test_an_index_that_cannot_be_built_is_a_clear_start_error(mongo_config, raw_db):
    # Two entries for one (namespace, key): the unique index cannot be created.
    coll = raw_db[f"{mongo_config.collection_prefix}metadata"]
    coll.insert_many(
        [{"namespace": "ns", "key": "k", "data": {}}, {"namespace": "ns", "key": "k", "data": {}}]
    )
    with pytest.raises(MongoUnavailable, match="cannot create the indexes at mongodb://"):
        await MongoMemory.connect(mongo_config)
