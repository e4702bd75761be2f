"""Recall with a store that also searches by words (docs/host/recall.md, "Fusion"): both legs
run with the same scope, each hit says why it came, and every hit — a lexical one too —
passes the recall check against the message store."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aalis_api_embedding import embedding
from aalis_api_memory import memory
from aalis_api_vectorstore import (
    InMemoryVectorStore,
    ScopeFilter,
    VectorHit,
    recall,
    vectorstore,
)
from aalis_plugin_memory_vector import MemoryVector
from aalis_schema_message import Message, new_message_id

from aalis_core import Host, Plugin

from .conftest import SwitchableEmbedder, inmemory

T0 = 1_700_000_000_000


class WordsStore(InMemoryVectorStore):
    """The reference store with a lexical leg of the signature the stores get (issue 27):
    records sharing a word with the query, most shared words first, scope applied inside.
    ``leak`` makes it ignore the scope, as a broken third-party store would; ``blind``
    makes its vector leg find nothing, so what is recalled came by words alone."""

    leak = False
    blind = False

    async def search(self, vector: Any, k: int, where: ScopeFilter) -> list[VectorHit]:
        found = await super().search(vector, k, where)
        return [] if self.blind else found

    async def lexical_search(self, query: str, k: int, where: ScopeFilter) -> list[VectorHit]:
        words = set(re.findall(r"[\w-]+", query.lower()))
        found: list[VectorHit] = []
        for stored in self._rows.values():
            record = stored.record
            inside = where.matches(
                session_id=record.session_id,
                role=record.role,
                model_id=record.model_id,
                platform=record.platform,
                user_id=record.user_id,
            )
            shared = len(words & set(re.findall(r"[\w-]+", record.text.lower())))
            if shared and (inside or self.leak):
                found.append(
                    VectorHit(
                        message_id=record.message_id,
                        session_id=record.session_id,
                        timestamp=record.timestamp,
                        role=record.role,
                        model_id=record.model_id,
                        text=record.text,
                        platform=record.platform,
                        user_id=record.user_id,
                        score=float(shared),
                    )
                )
        found.sort(key=lambda h: (-h.score, -h.timestamp))
        return found[:k]


class Providers(Plugin):
    name = "test-hybrid-providers"
    provides = (embedding, vectorstore)

    def __init__(self, store: Any) -> None:
        self.embedder = SwitchableEmbedder()
        self.store = store

    async def start(self, ctx: Any) -> None:
        ctx.provide(embedding, self.embedder)
        ctx.provide(vectorstore, self.store)


class World:
    def __init__(self, host: Host, plugin: MemoryVector, store: Any) -> None:
        self.host, self.plugin, self.store = host, plugin, store

    @property
    def memory(self) -> Any:
        return self.host.capability(memory).use

    async def say(self, session_id: str, *texts: str, at: int = T0) -> list[Message]:
        said = [
            Message(role="user", content=text, timestamp=at + i * 60_000, id=new_message_id())
            for i, text in enumerate(texts)
        ]
        for message in said:
            await self.memory.save_message(session_id, message)
        await self.host.emit("memory_messages_saved", session_id=session_id, messages=said)
        assert self.plugin.indexer is not None
        assert await self.plugin.indexer.settle(5.0)
        return said

    async def recall(self, session_id: str, query: str, k: int = 5) -> list[Any]:
        hits: list[Any] = await self.host.capability(recall).use.recall(session_id, query, k=k)
        return hits


async def open_world(store: Any, mode: str = "isolated") -> AsyncIterator[World]:
    plugin = MemoryVector()
    host = Host(
        {"plugins": {"memory-vector": {"cross_session_mode": mode, "neighbours": 0}}},
        [inmemory.MemoryInmemory(), Providers(store), plugin],
        discover=False,
    )
    async with host:
        yield World(host, plugin, store)


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async for opened in open_world(WordsStore()):
        yield opened


ORDERS = (
    "What is the status of order AX-55813-K? The order status page is blank.",
    "Still nothing for AX-55812-K, it has not arrived.",
    "What is the status of order AX-55811-K? The order status page is blank.",
    "The status of my order is unclear, the order status page is blank.",
)


async def test_each_hit_says_which_leg_found_it(world: World) -> None:
    await world.say("s", *ORDERS)
    hits = await world.recall("s", "status of order AX-55812-K", k=4)
    assert hits[0].message.content == ORDERS[1]  # the identifier the query names, first
    assert {hit.source for hit in hits} <= {"vector", "lexical", "both"}
    assert hits[0].source == "both"


class _WithoutLexicalLeg:
    """The real reference store seen by a recall that predates the optional group: every
    method but ``lexical_search`` (a third-party store without it)."""

    def __init__(self, store: InMemoryVectorStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "lexical_search":
            raise AttributeError(name)
        return getattr(self._store, name)


async def test_without_a_lexical_leg_every_hit_is_a_vector_hit() -> None:
    async for world in open_world(_WithoutLexicalLeg(InMemoryVectorStore())):  # type: ignore[arg-type]
        await world.say("s", *ORDERS)
        hits = await world.recall("s", "status of order AX-55812-K", k=4)
        assert [hit.source for hit in hits] == ["vector"] * 4
        # cosines, not fusion scores, when only the vectors ranked
        assert hits[0].score > 0.1


async def test_a_lexical_hit_of_a_deleted_message_is_never_shown(world: World) -> None:
    world.store.blind = True
    said = await world.say("s", "the locker code is QX-7781", "another locker QX-7781 note")
    assert [h.source for h in await world.recall("s", "QX-7781")] == ["lexical", "lexical"]
    # deleted from the message store behind the index's back (another process)
    await world.memory.delete_messages_by_ids("s", [said[0].id])
    hits = await world.recall("s", "QX-7781")
    assert [h.message.content for h in hits] == ["another locker QX-7781 note"]
    assert said[0].id not in {e.message_id for e in await world.store.entries("s")}


async def test_a_lexical_hit_of_a_rewritten_message_shows_only_the_new_text(
    world: World,
) -> None:
    world.store.blind = True
    await world.say("s", "my plate is B-KL 442")
    # rewritten by another process: no event reaches this one
    assert await world.memory.update_message_content("s", "B-KL 442", "M-ZZ 9")
    assert await world.recall("s", "B-KL 442") == []
    assert await world.plugin.indexer.settle(5.0)  # type: ignore[union-attr]
    hits = await world.recall("s", "plate M-ZZ 9")
    assert [h.message.content for h in hits] == ["my plate is M-ZZ 9"]


async def test_fusion_never_returns_an_out_of_scope_hit() -> None:
    store = WordsStore()
    store.leak = True  # even a store that ignores the scope in its lexical leg
    async for world in open_world(store):
        await world.say("mine", "my order is AX-1000-A")
        await world.say("theirs", "their order is AX-1000-A, a secret")
        hits = await world.recall("mine", "order AX-1000-A", k=10)
        assert [hit.session_id for hit in hits] == ["mine"]


def _sqlite_store(tmp_path: Path) -> Any:
    sqlite = pytest.importorskip("aalis_plugin_vectorstore_sqlite")
    return sqlite.SqliteVectorStore(tmp_path / "vectors.db")


@pytest.mark.parametrize("kind", ["inmemory", "sqlite"])
async def test_the_repository_stores_fuse_both_legs(kind: str, tmp_path: Path) -> None:
    store: Any = InMemoryVectorStore() if kind == "inmemory" else _sqlite_store(tmp_path)
    if not callable(getattr(store, "lexical_search", None)):
        pytest.skip(
            f"the {kind} store has no lexical_search yet: the lexical leg is added to the "
            "stores separately (issue 27); this test runs once it has"
        )
    if kind == "sqlite":
        await store.open()
    try:
        async for world in open_world(store):
            await world.say("s", *ORDERS)
            await world.say("other", "Still nothing for AX-55812-K, it has not arrived.")
            hits = await world.recall("s", "status of order AX-55812-K", k=4)
            assert hits[0].message.content == ORDERS[1]
            assert hits[0].source in {"lexical", "both"}
            assert {hit.session_id for hit in hits} == {"s"}
    finally:
        if kind == "sqlite":
            await store.close()
