"""memory-vector on a real host: what is indexed, what is recalled, what is forgotten."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
from aalis_agent import run_clear, undo_last_turn
from aalis_api_memory import memory
from aalis_api_vectorstore import RecallUnavailable, recall
from aalis_plugin_memory_vector import MemoryVector
from aalis_plugin_memory_vector._gaps import GAPS_NAMESPACE
from aalis_plugin_memory_vector._scope import OVERRIDES_NAMESPACE
from aalis_schema_message import Message, ToolCall, new_message_id

from aalis_core import Host

from .conftest import Providers, inmemory

T0 = 1_700_000_000_000


@attrs.define
class World:
    host: Host
    plugin: MemoryVector
    providers: Providers

    @property
    def memory(self) -> Any:
        return self.host.capability(memory).use

    @property
    def recall(self) -> Any:
        return self.host.capability(recall).use

    async def say(self, session_id: str, *messages: Message) -> None:
        named = [m if m.id is not None else m.with_id(new_message_id()) for m in messages]
        for message in named:
            await self.memory.save_message(session_id, message)
        await self.host.emit("memory_messages_saved", session_id=session_id, messages=named)

    async def settle(self) -> None:
        assert self.plugin.indexer is not None
        assert await self.plugin.indexer.settle(5.0)

    async def texts(self, session_id: str, query: str, k: int = 5) -> list[str]:
        await self.settle()
        return [hit.message.content for hit in await self.recall.recall(session_id, query, k=k)]


async def gap_of(memory_service: Any, session_id: str) -> dict[str, Any] | None:
    """The gaps and marks recorded for a session, merged (None when there are none)."""
    from aalis_plugin_memory_vector._gaps import read_entry

    found = [read_entry(e.key, e.data) for e in await memory_service.list_metadata(GAPS_NAMESPACE)]
    gaps = [g for sid, g in (f for f in found if f is not None) if sid == session_id]
    if not gaps:
        return None
    return {
        "from_ts": min(g.from_ts for g in gaps),
        "to_ts": max(g.to_ts for g in gaps),
        "reason": gaps[-1].reason,
        "reasons": [g.reason for g in gaps],
    }


def user(text: str, ts: int, **metadata: Any) -> Message:
    return Message(role="user", content=text, timestamp=ts, metadata=metadata or None)


def assistant(text: str, ts: int) -> Message:
    return Message(role="assistant", content=text, timestamp=ts)


@pytest.fixture
async def world(request: pytest.FixtureRequest) -> AsyncIterator[World]:
    config = getattr(request, "param", None) or {}
    plugin, providers = MemoryVector(), Providers()
    host = Host(
        {"plugins": {"memory-vector": config}},
        [inmemory.MemoryInmemory(), providers, plugin],
        discover=False,
    )
    async with host:
        yield World(host, plugin, providers)


async def test_only_what_people_said_is_indexed(world: World) -> None:
    await world.say(
        "s",
        user("my bicycle is a red Gazelle", T0),
        Message(
            role="assistant",
            content="let me look",
            tool_calls=(ToolCall(id="c", name="find", arguments="{}"),),
            timestamp=T0 + 1,
        ),
        Message(
            role="tool", content="bicycle database says Gazelle", tool_call_id="c", timestamp=T0 + 2
        ),
        Message(role="assistant", content="A red Gazelle bicycle, noted.", timestamp=T0 + 3),
        Message(role="notice", content="bicycle notice", timestamp=T0 + 4),
        Message(role="system", content="bicycle marker", kind="event-marker", timestamp=T0 + 5),
        Message(role="user", content="   ", timestamp=T0 + 6),
    )
    await world.settle()
    stats = await world.providers.store.stats()
    assert stats.total == 2
    texts = await world.texts("s", "bicycle")
    assert sorted(texts) == ["A red Gazelle bicycle, noted.", "my bicycle is a red Gazelle"]


async def test_hostile_text_is_indexed_clipped_and_never_crashes(world: World) -> None:
    hostile = "NUL \x00, '; DROP TABLE vectors; --" + "é" * 5000
    await world.say("s", user(hostile, T0), user("x\U0001f600" * 3000, T0 + 1))
    # an emitter that announces text no backend would store (a lone surrogate)
    lone = user("\ud800 lone surrogate" + "\ud83d" * 3000, T0 + 2)
    await world.host.emit("memory_messages_saved", session_id="s", messages=[lone, "junk"])
    await world.settle()
    # the announced message is not in the store: its vector is checked out right after
    # the upsert (no index entry outlives the store's copy)
    assert (await world.providers.store.stats()).total == 2
    hits = await world.recall.recall("s", "DROP TABLE")
    assert hits
    assert hits[0].message.content == hostile
    from aalis_plugin_memory_vector._text import clip

    clipped = clip(lone.content or "", 2000)
    assert 1990 < len(clipped) <= 2000
    assert "\ud800" not in clipped


async def test_a_deleted_message_is_never_recalled_again(world: World) -> None:
    await world.say("s", user("my locker code is 4417", T0), assistant("noted the code", T0 + 1))
    await world.say("s", user("the spare key is under the blue pot", T0 + 2))
    await world.say("s", assistant("I will remember the blue pot", T0 + 3))
    assert "the spare key is under the blue pot" in await world.texts("s", "spare key blue pot")
    await world.settle()
    outcome = await undo_last_turn(world.memory, "s", world.host.emit)
    assert next(m.content for m in outcome.messages) == "the spare key is under the blue pot"
    texts = await world.texts("s", "spare key blue pot")
    assert all("blue pot" not in t for t in texts)
    deleted = await world.memory.delete_messages_by_timestamps("s", [T0])
    assert deleted == 1
    await world.host.emit("memory_messages_deleted", session_id="s", timestamps=[T0], ids=[])
    assert all("4417" not in t for t in await world.texts("s", "locker code 4417"))


async def test_a_delete_while_the_batch_is_being_embedded_wins(world: World) -> None:
    gate = world.providers.embedder.gate = asyncio.Event()
    await world.say("s", user("the alarm code is 9911", T0))
    await asyncio.sleep(0.05)  # the worker is now inside embed_documents, waiting
    await world.memory.delete_messages_by_timestamps("s", [T0])
    await world.host.emit("memory_messages_deleted", session_id="s", timestamps=[T0], ids=[])
    gate.set()
    await world.settle()
    assert (await world.providers.store.stats()).total == 0


async def test_a_rewritten_message_is_recalled_by_its_new_text_only(world: World) -> None:
    await world.say("s", user("my dentist is doctor Alvarez on Elm street", T0))
    await world.say("s", user("I like tea", T0 + 1))
    await world.settle()
    changed = await world.memory.update_message_content("s", "Alvarez on Elm", "Nakamura on Oak")
    assert changed == 1
    rewritten = [m for m in await world.memory.get_history("s", math.inf) if m.timestamp == T0]
    await world.host.emit("memory_messages_rewritten", session_id="s", messages=rewritten)
    await world.settle()
    hits = await world.recall.recall("s", "Nakamura Oak", k=1)
    assert hits[0].message.content == "my dentist is doctor Nakamura on Oak street"
    for hit in await world.recall.recall("s", "Alvarez Elm", k=5):
        assert "Alvarez" not in (hit.message.content or "")
    # and the store holds one vector for it, with the new text
    assert (await world.providers.store.stats()).total == 2


async def test_a_rewrite_of_a_message_without_a_vector_indexes_nothing(world: World) -> None:
    await world.memory.save_message("s", user("never announced", T0))
    message = user("never announced, rewritten", T0)
    await world.host.emit("memory_messages_rewritten", session_id="s", messages=[message])
    await world.settle()
    assert (await world.providers.store.stats()).total == 0


async def test_clear_vector_and_all_leave_no_vector_but_context_leaves_them(world: World) -> None:
    for sid in ("a", "b"):
        await world.say(sid, user(f"session {sid} likes sailing", T0), assistant("ok", T0 + 1))
    await world.settle()
    assert (await world.providers.store.stats()).total == 4

    rows = await run_clear(world.host, "session", "a", ["context"])
    assert [r.type for r in rows] == ["context"]
    assert (await world.providers.store.stats()).total == 4  # -t context leaves vectors

    rows = await run_clear(world.host, "session", "a", ["vector"])
    assert [(r.source, r.type, r.success, str(r.message)) for r in rows] == [
        ("memory-vector", "vector", True, "2 vectors of session 'a' deleted")
    ]
    assert "session a likes sailing" not in await world.texts("a", "sailing")
    assert (await world.providers.store.stats()).total == 2
    assert len(await world.memory.get_history("b", math.inf)) == 2

    rows = await run_clear(world.host, "session", "b")  # no types: vectors go too
    assert {r.type for r in rows} == {"context", "vector"}
    assert (await world.providers.store.stats()).total == 0

    await world.say("c", user("late", T0 + 5))
    await world.settle()
    rows = await run_clear(world.host, "all", None, ["vector"])
    assert rows[0].success
    assert "every session" in str(rows[0].message)
    assert (await world.providers.store.stats()).total == 0


ISOLATED = {"cross_session_mode": "isolated"}


@pytest.mark.parametrize("world", [ISOLATED], indirect=True)
async def test_isolated_never_returns_another_sessions_text(world: World) -> None:
    await world.say("mine", user("I had pasta for lunch", T0))
    await world.say("theirs", user("my bank PIN is 2580 and my bank is ING", T0 + 1))
    texts = await world.texts("mine", "my bank PIN is 2580 and my bank is ING", k=10)
    assert texts == ["I had pasta for lunch"]


@pytest.mark.parametrize(
    "world",
    [
        {"cross_session_mode": "everything"},
        {"cross_session_mode": 3},
        {"cross_session_mode": "ALL"},
        {"platforms": {"cli": {"cross_session_mode": "wide"}}},
        {"platforms": {"cli": {"cross_session_mode": ["all"]}}},
    ],
    indirect=True,
)
async def test_an_invalid_mode_in_the_config_is_isolated(world: World) -> None:
    await world.say("mine", user("I had pasta for lunch", T0, platform="cli"))
    await world.say("theirs", user("my bank PIN is 2580", T0 + 1, platform="cli"))
    assert await world.texts("mine", "bank PIN 2580") == ["I had pasta for lunch"]
    assert world.plugin.recall is not None
    assert (await world.plugin.recall.mode_of("mine")).mode == "isolated"


@pytest.mark.parametrize("world", [{"cross_session_mode": "all"}], indirect=True)
@pytest.mark.parametrize("bad", ["nope", None, 1, {"mode": "all"}, ""])
async def test_an_invalid_session_override_is_isolated_even_under_a_wide_default(
    world: World, bad: Any
) -> None:
    await world.say("mine", user("I had pasta for lunch", T0))
    await world.say("theirs", user("my bank PIN is 2580", T0 + 1))
    assert "my bank PIN is 2580" in await world.texts("mine", "bank PIN 2580")  # default all
    await world.memory.save_metadata(OVERRIDES_NAMESPACE, "mine", {"cross_session_mode": bad})
    assert await world.texts("mine", "bank PIN 2580") == ["I had pasta for lunch"]
    assert world.plugin.recall is not None
    resolved = await world.plugin.recall.mode_of("mine")
    assert (resolved.mode, resolved.layer) == ("isolated", "session")


@pytest.mark.parametrize(
    "world", [{"platforms": {"cli": {"cross_session_mode": "isolated"}}}], indirect=True
)
async def test_the_session_override_beats_the_platform_profile(world: World) -> None:
    await world.say("mine", user("pasta", T0, platform="cli"))
    await world.say("theirs", user("my bank PIN is 2580", T0 + 1, platform="cli"))
    assert await world.texts("mine", "bank PIN 2580") == ["pasta"]
    await world.memory.save_metadata(OVERRIDES_NAMESPACE, "mine", {"cross_session_mode": "all"})
    assert "my bank PIN is 2580" in await world.texts("mine", "bank PIN 2580")


async def test_user_and_platform_modes_keep_to_their_person_and_platform(world: World) -> None:
    # a person is (platform, user id): alice on tg and alice on cli are two people
    await world.say("a1", user("alice owns a kayak", T0, user_id="alice", platform="tg"))
    await world.say("a2", user("hello", T0 + 1, user_id="alice", platform="cli"))
    await world.say("a3", user("alice sold her kayak", T0 + 2, user_id="alice", platform="cli"))
    await world.say("b1", user("bob owns a kayak too", T0 + 3, user_id="bob", platform="cli"))
    await world.say("anon", user("who knows", T0 + 4))
    for sid in ("a2", "anon"):
        await world.memory.save_metadata(OVERRIDES_NAMESPACE, sid, {"cross_session_mode": "user"})
    texts = await world.texts("a2", "owns a kayak")
    assert set(texts) == {"alice sold her kayak", "hello"}
    assert await world.texts("anon", "owns a kayak") == ["who knows"]  # no person: isolated
    await world.memory.save_metadata(OVERRIDES_NAMESPACE, "a2", {"cross_session_mode": "platform"})
    texts = await world.texts("a2", "owns a kayak")
    assert "bob owns a kayak too" in texts
    assert "alice owns a kayak" not in texts


async def test_a_model_change_searches_only_the_new_space_until_reindex(world: World) -> None:
    from aalis_api_embedding import HashEmbedder

    await world.say("s", user("the boat is moored at pier nine", T0), assistant("ok", T0 + 1))
    assert "the boat is moored at pier nine" in await world.texts("s", "boat pier nine")
    old = world.providers.embedder.model_id
    world.providers.embedder.inner = HashEmbedder(dim=256)  # another model, another space
    assert world.providers.embedder.model_id != old
    assert await world.texts("s", "boat pier nine") == []  # old vectors are never compared
    await world.say("s", user("the car is in bay four", T0 + 2))
    assert await world.texts("s", "boat pier car bay") == ["the car is in bay four"]
    assert (await world.providers.store.stats()).counts == {
        old: 2,
        world.providers.embedder.model_id: 1,
    }
    outcomes = await world.plugin.reindex("s")
    assert outcomes["s"].error is None
    assert outcomes["s"].indexed == 3
    assert "the boat is moored at pier nine" in await world.texts("s", "boat pier nine")
    assert (await world.providers.store.stats()).counts == {world.providers.embedder.model_id: 3}


@pytest.mark.parametrize("world", [{"queue_size": 2, "batch_size": 2}], indirect=True)
async def test_a_queue_overflow_is_recorded_and_backfilled(world: World) -> None:
    gate = world.providers.embedder.gate = asyncio.Event()
    for i in range(10):
        await world.say("s", user(f"fact number {i} is about topic {i}", T0 + i))
        await asyncio.sleep(0)
    assert world.plugin.indexer is not None
    gap = await gap_of(world.memory, "s")
    assert gap is not None
    assert gap["reason"] == "the indexing queue was full"
    gate.set()
    await world.settle()
    await world.plugin.indexer.backfill(force=True)
    assert (await world.providers.store.stats()).total == 10
    assert await gap_of(world.memory, "s") is None
    assert "fact number 7 is about topic 7" in await world.texts("s", "fact number 7 topic 7")


async def test_a_failing_embedder_records_a_gap_that_is_backfilled_when_it_recovers(
    world: World,
) -> None:
    world.providers.embedder.fail = RuntimeError("model crashed")
    await world.say("s", user("my cat is called Miso", T0))
    await world.settle()
    gap = await gap_of(world.memory, "s")
    assert gap is not None
    assert "model crashed" in gap["reason"]
    assert world.plugin.indexer is not None
    assert await world.plugin.indexer.backfill(force=True) == 0  # still failing: kept
    assert await gap_of(world.memory, "s") is not None
    world.providers.embedder.fail = None
    assert await world.plugin.indexer.backfill(force=True) == 1
    assert await world.texts("s", "cat Miso") == ["my cat is called Miso"]


async def test_neighbours_come_from_the_message_store_archived_included(world: World) -> None:
    await world.say("s", user("what should I pack for Iceland?", T0))
    await world.say("s", assistant("wool layers and a rain shell", T0 + 1))
    await world.say("s", user("thanks", T0 + 2))
    await world.settle()
    assert await world.memory.archive_span("s", 3) == 3
    [hit] = await world.recall.recall("s", "wool layers rain shell", k=1)
    assert hit.message.content == "wool layers and a rain shell"
    assert [m.content for m in hit.neighbours] == ["what should I pack for Iceland?", "thanks"]


async def test_recall_without_providers_says_why() -> None:
    plugin = MemoryVector()
    async with Host({}, [inmemory.MemoryInmemory(), plugin], discover=False) as host:
        with pytest.raises(RecallUnavailable, match="no embedding provider"):
            await host.capability(recall).use.recall("s", "anything")
        await host.capability(memory).use.save_message("s", user("said", T0))
        await host.emit("memory_messages_saved", session_id="s", messages=[user("said", T0)])
        gap = await gap_of(host.capability(memory).use, "s")
        assert gap is not None
        assert "no embedder" in gap["reason"]


@pytest.mark.parametrize("world", [{"embed_timeout_s": 0.2}], indirect=True)
async def test_a_hanging_embedder_becomes_a_gap_and_recall_says_so(world: World) -> None:
    world.providers.embedder.gate = asyncio.Event()  # never set: embed_documents hangs

    async def hang(text: str) -> list[float]:
        await asyncio.sleep(30)
        return []

    world.providers.embedder.embed_query = hang  # type: ignore[method-assign]
    await world.say("s", user("my cat is called Miso", T0))
    await world.settle()
    gap = await gap_of(world.memory, "s")
    assert gap is not None
    assert "TimeoutError" in gap["reason"]
    with pytest.raises(RecallUnavailable, match=r"did not answer within 0\.2 s"):
        await world.recall.recall("s", "cat")


async def test_a_store_that_refuses_a_batch_records_a_gap(world: World) -> None:
    from aalis_api_vectorstore import DimensionMismatch

    async def refuse(records: Any) -> int:
        raise DimensionMismatch("m", 384, 12)

    world.providers.store.upsert = refuse  # type: ignore[method-assign]
    await world.say("s", user("my cat is called Miso", T0))
    await world.settle()
    gap = await gap_of(world.memory, "s")
    assert gap is not None
    assert "DimensionMismatch" in gap["reason"]


@pytest.mark.parametrize("world", [{"batch_size": 2}], indirect=True)
async def test_a_reindex_that_fails_half_way_leaves_a_gap_for_the_rest(world: World) -> None:
    for i in range(6):
        await world.say("s", user(f"message {i}", T0 + i))
    await world.settle()
    world.providers.embedder.fail = RuntimeError("model crashed")
    outcomes = await world.plugin.reindex("s")
    assert outcomes["s"].error is not None
    assert "model crashed" in outcomes["s"].error
    gap = await gap_of(world.memory, "s")
    assert gap is not None
    assert gap["from_ts"] <= T0
    assert gap["to_ts"] >= T0 + 5
    world.providers.embedder.fail = None
    assert world.plugin.indexer is not None
    assert await world.plugin.indexer.backfill(force=True) == 6
    assert (await world.providers.store.stats()).total == 6
