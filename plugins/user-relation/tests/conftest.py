"""Fixtures of user-relation's tests: a real host on memory-sqlite (a file in tmp_path)
with the plugin, and helpers that save messages the way the chat does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import PromptRequest, collect_prompt_blocks
from aalis_api_memory import memory
from aalis_api_relation import PersonRef
from aalis_plugin_memory_sqlite import MemorySqlite
from aalis_plugin_user_relation import UserRelation
from aalis_schema_message import Message, new_message_id

from aalis_core import Host

T0 = 1_700_000_000_000
ADA = PersonRef("cli", "ada")
BEN = PersonRef("cli", "ben")


def said(text: str, ts: int, person: PersonRef = ADA) -> Message:
    return Message(
        id=new_message_id(),
        role="user",
        content=text,
        timestamp=ts,
        metadata={"platform": person.platform, "user_id": person.user_id},
    )


class World:
    def __init__(self, host: Host, plugin: UserRelation) -> None:
        self.host = host
        self.plugin = plugin
        self.clock = T0

    @property
    def memory(self) -> Any:
        return self.host.capability(memory).use

    @property
    def service(self) -> Any:
        return self.plugin.active()[1]

    async def say(self, session_id: str, text: str, person: PersonRef = ADA) -> Message:
        self.clock += 1000
        message = said(text, self.clock, person)
        await self.memory.save_message(session_id, message)
        await self.host.emit("memory_messages_saved", session_id=session_id, messages=[message])
        assert await self.plugin.active()[0].settle(5.0)
        return message

    async def delete(self, session_id: str, *messages: Message) -> None:
        ids = [m.id for m in messages if m.id]
        await self.memory.delete_messages_by_ids(session_id, ids)
        await self.host.emit(
            "memory_messages_deleted",
            session_id=session_id,
            timestamps=[m.timestamp for m in messages],
            ids=ids,
        )

    async def values(self, person: PersonRef = ADA, attribute: str | None = None) -> list[str]:
        facts = await self.service.facts(person)
        return [f.value for f in facts if attribute is None or f.attribute == attribute]

    async def block(self, session_id: str, query: str = "hello") -> str:
        blocks = await collect_prompt_blocks(
            self.host, PromptRequest(session_id=session_id, query=query)
        )
        return "\n".join(b.content for b in blocks if b.source == "user-relation")


def host_for(db: Path, config: dict[str, Any] | None = None) -> tuple[Host, UserRelation]:
    plugin = UserRelation()
    host = Host(
        {"plugins": {"memory-sqlite": {"path": str(db)}, "user-relation": config or {}}},
        [MemorySqlite(), plugin],
        discover=False,
    )
    return host, plugin


@pytest.fixture
async def world(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[World]:
    config = getattr(request, "param", None) or {}
    host, plugin = host_for(tmp_path / "facts.db", config)
    async with host:
        yield World(host, plugin)
