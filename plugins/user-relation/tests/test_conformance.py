"""The contract's conformance kit on the plugin over every memory backend: facts derived from
real saved messages by the offline extractor and stored in each backend's metadata
(memory-sqlite, memory-inmemory, memory-postgres on an embedded server, memory-mongodb on a
wire-protocol server)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from aalis_api_relation import PersonRef
from aalis_api_relation_conformance import RelationConformance, sentence
from aalis_plugin_user_relation import UserRelation

from aalis_core import Host, Plugin

from .conftest import World, host_for


class _Harness:
    def __init__(self, world: World) -> None:
        self.world = world
        self.service = world.service

    async def teach(self, session_id: str, person: PersonRef, attribute: str, value: str) -> str:
        message = await self.world.say(session_id, sentence(attribute, value), person)
        assert message.id is not None
        return message.id

    async def unsay(self, session_id: str, message_id: str) -> None:
        (record,) = await self.world.memory.get_messages_by_ids([message_id])
        await self.world.delete(session_id, record.message)


class TestUserRelationOnSqlite(RelationConformance):
    @pytest_asyncio.fixture
    async def harness(self, tmp_path: Path) -> AsyncIterator[_Harness]:
        host, plugin = host_for(tmp_path / "kit.db")
        async with host:
            yield _Harness(World(host, plugin))


async def _hosted(backend: Plugin, config: dict[str, Any]) -> tuple[Host, UserRelation]:
    plugin = UserRelation()
    host = Host({"plugins": config}, [backend, plugin], discover=False)
    return host, plugin


class TestUserRelationOnInmemory(RelationConformance):
    @pytest_asyncio.fixture
    async def harness(self) -> AsyncIterator[_Harness]:
        from aalis_plugin_memory_inmemory import MemoryInmemory

        host, plugin = await _hosted(MemoryInmemory(), {})
        async with host:
            yield _Harness(World(host, plugin))


class TestUserRelationOnPostgres(RelationConformance):
    @pytest_asyncio.fixture
    async def harness(self, postgres_uri: str) -> AsyncIterator[_Harness]:
        from aalis_plugin_memory_postgres import MemoryPostgres
        from aalis_test_support.postgres import drop_schema

        schema = f"facts_{uuid.uuid4().hex[:8]}"
        config = {"memory-postgres": {"uri": postgres_uri, "schema": schema}}
        host, plugin = await _hosted(MemoryPostgres(), config)
        try:
            async with host:
                yield _Harness(World(host, plugin))
        finally:
            drop_schema(postgres_uri, schema)


class TestUserRelationOnMongodb(RelationConformance):
    @pytest_asyncio.fixture
    async def harness(self, mongodb_server: Any) -> AsyncIterator[_Harness]:
        from aalis_plugin_memory_mongodb import MemoryMongodb

        config = {
            "memory-mongodb": {
                "uri": mongodb_server.uri,
                "database": mongodb_server.database,
                "collection_prefix": f"f{uuid.uuid4().hex[:8]}_",
            }
        }
        host, plugin = await _hosted(MemoryMongodb(), config)
        async with host:
            yield _Harness(World(host, plugin))
