"""Vectors keyed on message ids, and recall checked against the store (docs/recall.md,
"Identity and the recall check")."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aalis_agent import run_clear
from aalis_api_memory import memory
from aalis_api_vectorstore import recall
from aalis_plugin_memory_vector import MemoryVector
from aalis_schema_message import Message, new_message_id

from aalis_core import Host

from .conftest import Providers, inmemory

T0 = 1_700_000_000_000


class World:
    def __init__(self, host: Host, plugin: MemoryVector, providers: Providers) -> None:
        self.host, self.plugin, self.providers = host, plugin, providers

    @property
    def memory(self) -> Any:
        return self.host.capability(memory).use

    @property
    def recall(self) -> Any:
        return self.host.capability(recall).use

    async def say(self, session_id: str, *messages: Message) -> list[Message]:
        named = [m if m.id is not None else m.with_id(new_message_id()) for m in messages]
        for message in named:
            await self.memory.save_message(session_id, message)
        await self.host.emit("memory_messages_saved", session_id=session_id, messages=named)
        return named

    async def settle(self) -> None:
        assert self.plugin.indexer is not None
        assert await self.plugin.indexer.settle(5.0)


def user(text: str, ts: int, **metadata: Any) -> Message:
    return Message(role="user", content=text, timestamp=ts, metadata=metadata or None)


@pytest.fixture
async def world() -> AsyncIterator[World]:
    plugin, providers = MemoryVector(), Providers()
    host = Host({}, [inmemory.MemoryInmemory(), providers, plugin], discover=False)
    async with host:
        yield World(host, plugin, providers)


async def test_two_messages_of_one_millisecond_keep_their_own_vectors(world: World) -> None:
    bob, carol = await world.say(
        "group",
        user("Bob: my bank PIN hint is the dog's name", T0),
        user("Carol: I am vegan", T0),
    )
    await world.settle()
    assert (await world.providers.store.stats()).total == 2
    [vegan] = await world.recall.recall("group", "vegan", k=1)
    assert vegan.message.content == "Carol: I am vegan"
    assert vegan.message.id == carol.id
    [pin] = await world.recall.recall("group", "bank PIN hint dog", k=1)
    assert pin.message.content == "Bob: my bank PIN hint is the dog's name"
    assert pin.message.id == bob.id


async def test_neighbours_are_the_right_messages_when_timestamps_are_shared(
    world: World,
) -> None:
    await world.say(
        "s",
        user("what should I pack for Iceland?", T0),
        Message(role="assistant", content="wool layers and a rain shell", timestamp=T0),
        user("thanks", T0),
    )
    await world.settle()
    [hit] = await world.recall.recall("s", "wool layers rain shell", k=1)
    assert hit.message.content == "wool layers and a rain shell"
    assert [m.content for m in hit.neighbours] == ["what should I pack for Iceland?", "thanks"]


async def test_deleting_one_of_two_messages_of_a_millisecond_keeps_the_other(
    world: World,
) -> None:
    bob, _ = await world.say(
        "group", user("Bob likes sailing boats", T0), user("Carol likes sailing ships", T0)
    )
    await world.settle()
    assert await world.memory.delete_messages_by_ids("group", [bob.id]) == 1
    await world.host.emit(
        "memory_messages_deleted", session_id="group", timestamps=[T0], ids=[bob.id]
    )
    texts = [h.message.content for h in await world.recall.recall("group", "sailing", k=5)]
    assert texts == ["Carol likes sailing ships"]


async def test_a_hit_whose_message_is_gone_is_dropped_and_its_vector_deleted(
    world: World,
) -> None:
    # Another process cleared the history and nobody told this one: the vector is orphaned.
    await world.say("s", user("my locker code is 4417", T0), user("I like tea", T0 + 1))
    await world.settle()
    await world.memory.clear_session("s")
    assert await world.recall.recall("s", "locker code 4417", k=5) == []
    assert (await world.providers.store.stats()).total == 0


async def test_a_hit_shows_the_stores_current_text_never_a_stale_copy(world: World) -> None:
    await world.say("s", user("my dentist is doctor Alvarez on Elm street", T0))
    await world.settle()
    # rewritten by another process: no event reaches this one
    assert await world.memory.update_message_content("s", "Alvarez on Elm", "Nakamura on Oak")
    for hit in await world.recall.recall("s", "dentist Alvarez Elm street", k=5):
        assert "Alvarez" not in (hit.message.content or "")
    await world.settle()
    hits = await world.recall.recall("s", "dentist Nakamura Oak street", k=1)
    assert [h.message.content for h in hits] == ["my dentist is doctor Nakamura on Oak street"]


async def test_a_clear_between_embedding_and_upsert_leaves_no_vector(world: World) -> None:
    # The clear of another process: it removes the history (and its vectors) while this
    # process is embedding; this process's upsert lands afterwards and must be undone.
    gate = world.providers.embedder.gate = asyncio.Event()
    await world.say("s", user("the alarm code is 9911", T0))
    await asyncio.sleep(0.05)  # the worker is inside embed_documents
    await world.memory.clear_session("s")
    await world.providers.store.delete("s")
    gate.set()
    await world.settle()
    assert (await world.providers.store.stats()).total == 0


async def test_the_clear_deletes_vectors_after_the_history_is_gone(world: World) -> None:
    await world.say("s", user("my locker code is 4417", T0))
    await world.settle()
    seen: list[int] = []

    original = world.memory.clear_session

    async def clear_session(session_id: str) -> Any:
        seen.append((await world.providers.store.stats()).total)
        return await original(session_id)

    world.memory.clear_session = clear_session
    try:
        await run_clear(world.host, "session", "s")
    finally:
        del world.memory.clear_session
    assert seen == [1]  # the vector was still there while the history was cleared
    assert (await world.providers.store.stats()).total == 0
    assert math.isclose(0, len(await world.memory.get_history("s", math.inf)))


async def test_a_store_without_ids_falls_back_to_timestamps_and_says_so_once(
    world: World,
) -> None:
    # A third-party store without the MessagesById group: hits are checked by their
    # millisecond, and the plugin says once what it cannot guarantee.
    backend: Any = world.host.plugin("memory-inmemory").store  # type: ignore[union-attr]
    backend.get_messages_by_ids = None
    backend.delete_messages_by_ids = None
    warnings: list[str] = []
    assert world.plugin.indexer is not None
    logger = world.plugin.indexer.view._logger
    original = logger.warning

    def record(event: str, **fields: Any) -> None:
        warnings.append(event)
        original(event, **fields)

    world.plugin.indexer.view._logger = type("L", (), {"warning": staticmethod(record)})()
    try:
        await world.say("s", user("my locker code is 4417", T0), user("I like tea", T0 + 1))
        await world.settle()
        for _ in range(3):
            [hit] = await world.recall.recall("s", "locker code 4417", k=1)
            assert hit.message.content == "my locker code is 4417"
        await world.memory.clear_session("s")
        assert await world.recall.recall("s", "locker code 4417", k=5) == []  # still checked
    finally:
        world.plugin.indexer.view._logger = logger
    assert len([w for w in warnings if "cannot look messages up by id" in w]) == 1


async def test_a_store_that_cannot_confirm_the_hits_makes_recall_unavailable(
    world: World,
) -> None:
    from aalis_api_vectorstore import RecallUnavailable

    await world.say("s", user("my locker code is 4417", T0))
    await world.settle()
    backend: Any = world.host.plugin("memory-inmemory").store  # type: ignore[union-attr]

    async def broken(ids: Any) -> Any:
        raise ConnectionError("store unreachable")

    backend._get_messages_by_ids = broken  # under the proxy's cached public method
    with pytest.raises(RecallUnavailable, match="could not confirm"):
        await world.recall.recall("s", "locker code", k=1)


async def test_check_finds_missing_orphaned_and_stale_and_repair_fixes_them(
    world: World,
) -> None:
    await world.say("a", user("the boat is at pier nine", T0), user("the car is in bay four", T0))
    await world.say("b", user("my dentist is doctor Alvarez", T0))
    await world.settle()
    # behind the index's back, as another process without events would do it
    await world.memory.save_message("a", user("never announced", T0 + 1).with_id(new_message_id()))
    await world.memory.update_message_content("a", "pier nine", "pier ten")
    await world.memory.clear_session("b")
    found = {c.session_id: c for c in await world.plugin.check(None)}
    assert (found["a"].messages, found["a"].missing, found["a"].stale) == (3, 1, 1)
    assert (found["a"].in_gap, found["a"].holes, found["a"].orphaned) == (0, 1, 0)
    assert (found["b"].messages, found["b"].orphaned) == (0, 1)
    assert [c.session_id for c in await world.plugin.check("b")] == ["b"]
    repaired = {c.session_id: c for c in await world.plugin.check(None, repair=True)}
    assert repaired["a"].repaired == "2 indexed"
    assert repaired["b"].repaired == "1 orphans deleted"
    assert not any(c.differs for c in await world.plugin.check(None))
    texts = [h.message.content for h in await world.recall.recall("a", "boat pier", k=5)]
    assert "the boat is at pier ten" in texts


async def test_check_repair_and_reindex_leave_another_features_vectors(world: World) -> None:
    # The LangGraph store keeps its items' vectors in the same vector store under roles of
    # its own ("item", "marker"), in sessions that are metadata namespaces: they are not
    # recall's orphans, so the check reports nothing and neither repair nor reindex drops them.
    from aalis_api_vectorstore import VectorRecord

    await world.say("a", user("the boat is at pier nine", T0))
    await world.settle()
    store = world.providers.store
    dim = world.providers.embedder.dim

    def record(session_id: str, message_id: str, role: str) -> VectorRecord:
        return VectorRecord(
            message_id=message_id,
            session_id=session_id,
            timestamp=T0,
            role=role,
            model_id="langgraph-store/x",
            text="a remembered preference",
            vector=[1.0] + [0.0] * (dim - 1),
        )

    await store.upsert([record("ns:prefs", "item-1", "item"), record("ns:prefs", "m", "marker")])
    await store.upsert([record("a", "item-2", "item")])
    checks = await world.plugin.check(None)
    assert [c.session_id for c in checks] == ["a"]
    assert not checks[0].differs
    await world.plugin.check(None, repair=True)
    await world.plugin.reindex(None)
    assert {e.message_id for e in await store.entries("ns:prefs")} == {"item-1", "m"}
    assert "item-2" in {e.message_id for e in await store.entries("a")}


async def test_sessions_a_store_migration_dropped_are_recorded_as_gaps_and_backfilled(
    tmp_path: Any,
) -> None:
    # A vector store that dropped vectors from before message identity names their
    # sessions: the plugin records them as gaps first, then acknowledges, then backfills.
    sqlite = pytest.importorskip("aalis_plugin_memory_sqlite._plugin")
    from aalis_api_vectorstore import InMemoryVectorStore
    from aalis_plugin_memory_vector._gaps import GAPS_NAMESPACE

    config = {"host": {"data_dir": str(tmp_path)}}
    async with Host(config, [sqlite.MemorySqlite()], discover=False) as host:
        mem = host.capability(memory).use
        for i, text in enumerate(["the boat is at pier nine", "the car is in bay four"]):
            await mem.save_message("old", user(text, T0 + i).with_id(new_message_id()))

    class Migrated(InMemoryVectorStore):
        def __init__(self) -> None:
            super().__init__()
            self.dropped = ["old"]

        async def dropped_sessions(self) -> list[str]:
            return list(self.dropped)

        async def acknowledge_dropped(self, session_ids: Any) -> None:
            gaps = await plugin.caps.memory.use.list_metadata(GAPS_NAMESPACE)
            assert gaps, "acknowledged before the gap was recorded"
            self.dropped = [s for s in self.dropped if s not in session_ids]

    providers, plugin = Providers(), MemoryVector()
    providers.store = Migrated()
    async with Host(config, [sqlite.MemorySqlite(), providers, plugin], discover=False):
        assert providers.store.dropped == []
    # the host backfilled at start (its stop waits for that), so nothing is left to do
    assert (await providers.store.stats()).total == 2
    async with Host(config, [sqlite.MemorySqlite()], discover=False) as host:
        assert await host.capability(memory).use.list_metadata(GAPS_NAMESPACE) == []
