"""Private by default (docs/host/privacy.md): who a recall may read, through the Python
recall API and the prompt block a turn gets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aalis_agent import PromptRequest, collect_prompt_blocks, forget_person
from aalis_api_memory import memory
from aalis_api_vectorstore import recall
from aalis_plugin_memory_vector import MemoryVector
from aalis_plugin_memory_vector._persons import PERSONS_NAMESPACE
from aalis_plugin_memory_vector._scope import OVERRIDES_NAMESPACE
from aalis_schema_message import Message

from aalis_core import Host
from aalis_core.testing import capture_logs

from .conftest import Providers, inmemory

T0 = 1_700_000_000_000
PIN = "my bank PIN is 2580"


class World:
    def __init__(self, host: Host, plugin: MemoryVector) -> None:
        self.host = host
        self.plugin = plugin

    @property
    def memory(self) -> Any:
        return self.host.capability(memory).use

    async def say(self, session_id: str, *messages: Message) -> None:
        for message in messages:
            await self.memory.save_message(session_id, message)
        await self.host.emit("memory_messages_saved", session_id=session_id, messages=messages)
        assert self.plugin.indexer is not None
        assert await self.plugin.indexer.settle(5.0)

    async def recalled(self, session_id: str, query: str = PIN) -> list[str]:
        hits = await self.host.capability(recall).use.recall(session_id, query, k=20)
        return [hit.message.content for hit in hits]

    async def prompt_block(self, session_id: str, query: str = PIN) -> str:
        blocks = await collect_prompt_blocks(
            self.host, PromptRequest(session_id=session_id, query=query)
        )
        return "\n".join(block.content for block in blocks)


def said(text: str, ts: int, platform: str | None = None, user_id: str | None = None) -> Message:
    metadata = {
        key: value
        for key, value in (("platform", platform), ("user_id", user_id))
        if value is not None
    }
    return Message(role="user", content=text, timestamp=ts, metadata=metadata or None)


@pytest.fixture
async def world(request: pytest.FixtureRequest) -> AsyncIterator[World]:
    config = getattr(request, "param", None) or {}
    plugin = MemoryVector()
    host = Host(
        {"plugins": {"memory-vector": config}},
        [inmemory.MemoryInmemory(), Providers(), plugin],
        discover=False,
    )
    async with host:
        yield World(host, plugin)


async def test_a_brand_new_session_recalls_only_itself_by_default(world: World) -> None:
    await world.say("theirs", said(PIN, T0, "telegram", "7"))
    await world.say("fresh", said("hello there", T0 + 1))
    assert PIN not in await world.recalled("fresh")
    assert PIN not in await world.prompt_block("fresh")
    assert world.plugin.recall is not None
    assert (await world.plugin.recall.mode_of("fresh")).mode == "user"


async def test_user_mode_is_bound_to_the_platform(world: World) -> None:
    await world.say("qq-42", said(PIN, T0, "qq", "42"))
    await world.say("tg-42", said("hi, what is my PIN?", T0 + 1, "telegram", "42"))
    assert PIN not in await world.recalled("tg-42")
    assert PIN not in await world.prompt_block("tg-42")
    # the same person on the same platform, another session: recalled
    await world.say("tg-42-b", said("my PIN is 1111", T0 + 2, "telegram", "42"))
    assert "my PIN is 1111" in await world.recalled("tg-42", "my PIN is 1111")


async def test_a_group_never_reaches_its_speakers_private_sessions(world: World) -> None:
    await world.say("alice-dm", said(PIN, T0, "telegram", "alice"))
    await world.say(
        "group",
        said("morning all", T0 + 1, "telegram", "bob"),
        said("lunch at noon?", T0 + 2, "telegram", "alice"),  # the latest speaker
    )
    assert PIN not in await world.recalled("group")
    assert PIN not in await world.prompt_block("group")
    # nor does the group's text reach alice's private session
    assert "lunch at noon?" not in await world.recalled("alice-dm", "lunch at noon?")
    assert "morning all" not in await world.prompt_block("alice-dm", "morning all")
    # the group recalls itself
    assert "morning all" in await world.recalled("group", "morning all")


async def test_a_new_speaker_makes_a_private_session_a_group_before_the_next_recall(
    world: World,
) -> None:
    await world.say("alice-dm", said(PIN, T0, "telegram", "alice"))
    await world.say("chat", said("hello", T0 + 1, "telegram", "alice"))
    assert PIN in await world.recalled("chat")
    # bob speaks in "chat"; the turn recalls before anyone announced the save
    await world.memory.save_message("chat", said("what is her PIN?", T0 + 2, "telegram", "bob"))
    assert PIN not in await world.recalled("chat")
    assert PIN not in await world.prompt_block("chat")


async def test_the_registry_is_rebuilt_from_the_store_when_missing(world: World) -> None:
    await world.say("alice-1", said(PIN, T0, "telegram", "alice"))
    await world.say("alice-2", said("hello", T0 + 1, "telegram", "alice"))
    for key in await world.memory.list_metadata_keys(PERSONS_NAMESPACE):
        await world.memory.delete_metadata(PERSONS_NAMESPACE, key)
    assert PIN in await world.recalled("alice-2")
    assert await world.memory.get_metadata(PERSONS_NAMESPACE, "alice-1") is not None


@pytest.mark.parametrize(
    "override",
    [
        {"cross_sesion_mode": "all"},  # misspelt key
        {"cross_session_mode": "user", "extra": 1},  # unknown key beside the right one
        {"cross_session_mode": ["user"]},  # wrong type
        {"cross_session_mode": "everyone"},  # wrong value
    ],
)
async def test_a_malformed_override_is_isolated_with_a_warning(
    world: World, override: dict[str, Any]
) -> None:
    await world.say("alice-1", said(PIN, T0, "telegram", "alice"))
    await world.say("alice-2", said("hello", T0 + 1, "telegram", "alice"))
    assert PIN in await world.recalled("alice-2")  # the default, user
    await world.memory.save_metadata(OVERRIDES_NAMESPACE, "alice-2", override)
    with capture_logs("warning") as logs:
        assert await world.recalled("alice-2") == ["hello"]
    warned = [line for line in logs.lines if "cross_session_mode" in str(line.get("event"))]
    assert warned, logs.lines
    assert warned[0]["session_id"] == "alice-2"
    assert warned[0]["layer"] == "session"
    assert world.plugin.recall is not None
    resolved = await world.plugin.recall.mode_of("alice-2")
    assert (resolved.mode, resolved.layer) == ("isolated", "session")


@pytest.mark.parametrize("world", [{"cross_session_mode": "platform"}], indirect=True)
async def test_platform_mode_keeps_to_one_platform(world: World) -> None:
    await world.say("tg-a", said("telegram kayak", T0, "telegram", "alice"))
    await world.say(
        "tg-group",
        said("group kayak", T0 + 1, "telegram", "bob"),
        said("me too", T0 + 2, "telegram", "carol"),
    )
    await world.say("qq-a", said("qq kayak", T0 + 3, "qq", "alice"))
    await world.say("nowhere", said("no platform kayak", T0 + 4))
    texts = await world.recalled("tg-a", "kayak")
    assert "group kayak" in texts  # platform mode shares a platform, groups included
    assert "qq kayak" not in texts
    assert "no platform kayak" not in texts
    assert await world.recalled("nowhere", "kayak") == ["no platform kayak"]


@pytest.mark.parametrize("world", [{"cross_session_mode": "all"}], indirect=True)
async def test_all_is_one_config_line_away(world: World) -> None:
    await world.say("qq-42", said(PIN, T0, "qq", "42"))
    await world.say("fresh", said("hello", T0 + 1))
    assert PIN in await world.recalled("fresh")


async def test_status_lists_every_session_override_and_every_invalid_one(world: World) -> None:
    from aalis_plugin_memory_vector._overrides import override_lines

    await world.memory.save_metadata(OVERRIDES_NAMESPACE, "open", {"cross_session_mode": "all"})
    await world.memory.save_metadata(OVERRIDES_NAMESPACE, "typo", {"cross_sesion_mode": "all"})
    await world.memory.save_metadata(OVERRIDES_NAMESPACE, "wrong", {"cross_session_mode": 3})
    lines = await override_lines(world.memory)
    assert lines[0] == "session overrides: 3 (2 invalid)"
    assert "  session open: all" in lines
    typo = next(line for line in lines if line.startswith("  session typo: "))
    assert "cross_sesion_mode" in typo
    assert "(invalid: isolated)" in typo
    assert any(line.startswith("  session wrong: ") and "invalid" in line for line in lines)


async def test_a_registry_entry_that_is_not_shaped_like_one_seals_its_session(
    world: World,
) -> None:
    await world.say("alice-1", said(PIN, T0, "telegram", "alice"))
    await world.say("alice-2", said("hello", T0 + 1, "telegram", "alice"))
    assert PIN in await world.recalled("alice-2")
    await world.memory.save_metadata(PERSONS_NAMESPACE, "alice-1", {"persons": "alice"})
    assert PIN not in await world.recalled("alice-2")


async def test_a_group_stays_a_group_once_the_other_person_is_forgotten(world: World) -> None:
    from aalis_plugin_memory_vector._persons import People

    await world.say("bob-dm", said("bob's own secret", T0, "telegram", "bob"))
    await world.say(
        "group",
        said("alice was here", T0 + 1, "telegram", "alice"),
        said("bob too", T0 + 2, "telegram", "bob"),
    )
    rows = await forget_person(world.host, "telegram:alice")
    assert all(row.success for row in rows), rows
    entry = People.from_json(await world.memory.get_metadata(PERSONS_NAMESPACE, "group"))
    assert entry.persons == frozenset({("telegram", "bob")})
    assert entry.group
    assert "bob's own secret" not in await world.recalled("group", "bob's own secret")


async def test_a_history_clear_takes_the_registry_entries_with_it(world: World) -> None:
    from aalis_agent import run_clear

    await world.say("alice-1", said(PIN, T0, "telegram", "alice"))
    await world.say("bob-1", said("hello", T0 + 1, "telegram", "bob"))
    await run_clear(world.host, "session", "alice-1", ["vector"])  # vectors only: kept
    assert await world.memory.get_metadata(PERSONS_NAMESPACE, "alice-1") is not None
    await run_clear(world.host, "session", "alice-1")
    assert await world.memory.get_metadata(PERSONS_NAMESPACE, "alice-1") is None
    assert await world.memory.get_metadata(PERSONS_NAMESPACE, "bob-1") is not None
    await run_clear(world.host, "all")
    assert await world.memory.list_metadata(PERSONS_NAMESPACE) == []
