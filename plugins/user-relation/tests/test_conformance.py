"""The contract's conformance kit on the plugin over memory-sqlite: facts derived from real
saved messages by the offline extractor."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aalis_api_relation import PersonRef
from aalis_api_relation.testing import RelationConformance, sentence

from .conftest import World, host_for


class _Harness:
    def __init__(self, world: World) -> None:
        self.world = world
        self.service = world.service
        self._sessions: dict[str, list[object]] = {}

    async def teach(self, session_id: str, person: PersonRef, attribute: str, value: str) -> str:
        message = await self.world.say(session_id, sentence(attribute, value), person)
        assert message.id is not None
        return message.id

    async def unsay(self, session_id: str, message_id: str) -> None:
        (record,) = await self.world.memory.get_messages_by_ids([message_id])
        await self.world.delete(session_id, record.message)


class TestUserRelationOnSqlite(RelationConformance):
    @pytest_asyncio.fixture
    async def harness(self, tmp_path) -> AsyncIterator[_Harness]:  # type: ignore[no-untyped-def]
        host, plugin = host_for(tmp_path / "kit.db")
        async with host:
            yield _Harness(World(host, plugin))
