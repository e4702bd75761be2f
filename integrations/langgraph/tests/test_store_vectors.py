"""``AalisStore.search(query=...)`` through the host's embedder and vector store.

Real plugins throughout: memory-sqlite (the items), embedding-hash (the embedder) and
vectorstore-sqlite (the vectors). The search asks the vector store for the nearest vectors
of the namespaces under the prefix; the items are the truth (docs/integrations/langgraph.md,
"Long-term memory").
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aalis_api_embedding import embedding
from aalis_api_memory import memory
from aalis_api_vectorstore import ScopeFilter, vectorstore
from aalis_langgraph import AalisStore, store_namespace
from aalis_plugin_embedding_hash import EmbeddingHash
from aalis_plugin_memory_sqlite import MemorySqlite
from aalis_plugin_vectorstore_sqlite import VectorstoreSqlite

from aalis_core import Host

ADA, BOB = ("memories", "ada"), ("memories", "bob")


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    plugins = [MemorySqlite(), EmbeddingHash(), VectorstoreSqlite()]
    async with Host(config, plugins, discover=False) as started:
        yield started


class _Counting:
    """The real metadata store, counting the listings of item namespaces."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.listed: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def list_metadata(self, namespace: str) -> Any:
        self.listed.append(namespace)
        return await self._store.list_metadata(namespace)


class _Handle:
    def __init__(self, use: Any) -> None:
        self.use = use
        self.present = True


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def _vectors(host: Host) -> Any:
    return host.capability(vectorstore).use


async def _ids(host: Host, namespace: tuple[str, ...]) -> list[str]:
    return [e.message_id for e in await _vectors(host).entries(store_namespace(namespace))]


async def test_a_query_is_answered_by_the_vector_store_without_reading_every_item(
    host: Host,
) -> None:
    counting = _Counting(host.capability(memory).use)
    store = AalisStore(host, index={"fields": ["text"]}, memory=_Handle(counting))
    await store.aput(ADA, "f1", {"text": "Ada's passport number is X1234567"})
    await store.aput(ADA, "f2", {"text": "Ada prefers window seats on long flights"})
    await store.aput(ADA, "f3", {"text": "The meeting with Bob is on Tuesday"})
    counting.listed.clear()
    hits = await store.asearch(("memories",), query="passport number", limit=2)
    assert hits[0].key == "f1"
    assert hits[0].score is not None
    assert hits[0].score > (hits[1].score or 0)
    # Only the list of namespaces is read; no item namespace is listed and ranked here.
    assert all(not ns.startswith("langgraph-store:") for ns in counting.listed)
    # The vectors are in the vector store, under a model of their own, not in the items.
    model = "langgraph-store/" + host.capability(embedding).use.model_id
    assert (await _vectors(host).stats()).counts[model] == 4  # 3 texts and the marker
    entry = await counting.get_metadata(store_namespace(ADA), "f1")
    assert "vectors" not in entry
    assert entry["indexed"] == 1
    # Recall (memory-vector) searches the embedder's own model: these never reach it.
    probe = await host.capability(embedding).use.embed_query("passport number")
    everywhere = ScopeFilter(model_id=host.capability(embedding).use.model_id, session_ids=None)
    assert await _vectors(host).search(probe, 10, everywhere) == []


async def test_the_search_is_scoped_to_the_namespace_prefix(host: Host) -> None:
    store = AalisStore(host, index={"fields": ["text"]})
    await store.aput(BOB, "b1", {"text": "passport number passport number"})
    await store.aput(ADA, "a1", {"text": "my old passport expired"})
    await store.aput(ADA, "a2", {"text": "green tea in the morning"})
    mine = await store.asearch(ADA, query="passport number", limit=10)
    assert [h.key for h in mine] == ["a1", "a2"]
    assert all(h.namespace == ADA for h in mine)
    both = await store.asearch(("memories",), query="passport number", limit=10)
    assert both[0].key == "b1"
    assert {h.namespace for h in both} == {ADA, BOB}


async def test_the_filter_is_exact_however_far_the_matches_rank(host: Host) -> None:
    store = AalisStore(host, index={"fields": ["text"]})
    # 60 close matches of another kind, 3 far ones of the kind asked for.
    for i in range(60):
        await store.aput(ADA, f"near{i:02}", {"text": f"passport number {i}", "kind": "id"})
    for i in range(3):
        await store.aput(ADA, f"far{i}", {"text": f"weather forecast day {i}", "kind": "rare"})
    hits = await store.asearch(ADA, query="passport number", filter={"kind": "rare"}, limit=5)
    assert sorted(h.key for h in hits) == ["far0", "far1", "far2"]
    # In the order of the scores the embedder gives, as a full scan would rank them.
    embedder = host.capability(embedding).use
    query = await embedder.embed_query("passport number")
    expected = sorted(
        [
            (
                -_cosine(query, (await embedder.embed_documents([f"weather forecast day {i}"]))[0]),
                f"far{i}",
            )
            for i in range(3)
        ]
    )
    assert [h.key for h in hits] == [key for _score, key in expected]
    for hit, (score, _key) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(-score, abs=1e-5)
    paged = await store.asearch(ADA, query="passport number", limit=5, offset=58)
    assert len(paged) == 5  # 63 items: offsets past the first hits are answered too


async def test_delete_update_and_expiry_take_the_vectors_with_them(host: Host) -> None:
    store = AalisStore(host, index={"fields": ["text", "note"]})
    await store.aput(ADA, "k", {"text": "passport", "note": "renew in May"})
    await store.aput(ADA, "gone", {"text": "passport copy"})
    assert len(await _ids(host, ADA)) == 4  # 3 texts and the namespace's marker
    await store.aput(ADA, "k", {"text": "visa"})  # one text now: the second vector goes
    ids = await _ids(host, ADA)
    assert len(ids) == 3
    await store.adelete(ADA, "gone")
    assert len(await _ids(host, ADA)) == 2
    assert [h.key for h in await store.asearch(ADA, query="passport copy")] == ["k"]

    short = AalisStore(host, index={"fields": ["text"]}, ttl={"refresh_on_read": False})
    await short.aput(BOB, "brief", {"text": "passport"}, ttl=0.0001)
    await short.aput(BOB, "kept", {"text": "passport"})
    assert len(await _ids(host, BOB)) == 3
    import asyncio

    await asyncio.sleep(0.05)
    assert [h.key for h in await short.asearch(BOB, query="passport")] == ["kept"]
    assert await short.asweep_ttl() == 1
    assert len(await _ids(host, BOB)) == 2


async def test_dropped_vectors_are_rebuilt_and_orphans_never_come_back(host: Host) -> None:
    store = AalisStore(host, index={"fields": ["text"]})
    await store.aput(ADA, "a1", {"text": "passport number X1234567"})
    await store.aput(BOB, "b1", {"text": "passport number Z7654321"})
    # `aalis clear --all` (memory-vector) and `aalis vector check --repair` drop every
    # vector memory-vector does not know: the next search re-indexes from the items.
    await _vectors(host).delete_all()
    hits = await store.asearch(("memories",), query="passport number", limit=5)
    assert {h.key for h in hits} == {"a1", "b1"}
    assert len(await _ids(host, ADA)) == 2
    # Another process deletes an item's entry (a clear of the metadata): its vector is
    # skipped by the search and deleted, never returned.
    await host.capability(memory).use.delete_metadata(store_namespace(BOB), "b1")
    hits = await store.asearch(("memories",), query="passport number", limit=5)
    assert [h.key for h in hits] == ["a1"]
    assert len(await _ids(host, BOB)) == 1  # only the marker is left
    assert await store.areindex() == 1


async def test_items_put_before_the_vector_store_are_found_after_it(tmp_path: Path) -> None:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite(), EmbeddingHash()], discover=False) as first:
        await AalisStore(first).aput(ADA, "a1", {"text": "passport number X1234567"})
    plugins = [MemorySqlite(), EmbeddingHash(), VectorstoreSqlite()]
    async with Host(config, plugins, discover=False) as second:
        hits = await AalisStore(second).asearch(ADA, query="passport number")
        assert [h.key for h in hits] == ["a1"]
        assert len(await _ids(second, ADA)) == 2


async def test_without_an_embedder_a_query_is_ignored_and_said_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite(), VectorstoreSqlite()], discover=False) as host:
        store = AalisStore(host)
        await store.aput(ADA, "old", {"text": "passport"})
        await store.aput(ADA, "new", {"text": "tea"})
        with caplog.at_level(logging.WARNING, logger="aalis_langgraph"):
            hits = await store.asearch(ADA, query="passport")
            await store.asearch(ADA, query="passport")
        assert [h.key for h in hits] == ["new", "old"]  # newest first, as without a query
        assert all(h.score is None for h in hits)
        assert sum("query` is ignored" in r.getMessage() for r in caplog.records) == 1


async def test_an_item_put_with_index_false_is_stored_and_not_embedded(host: Host) -> None:
    store = AalisStore(host, index={"fields": ["text"]})
    await store.aput(ADA, "a1", {"text": "passport number X1234567"})
    await store.aput(ADA, "secret", {"text": "passport number hidden"}, index=False)
    assert len(await _ids(host, ADA)) == 2  # a1's vector and the marker
    # As in LangGraph's InMemoryStore: scored items first, then unindexed ones fill the page.
    hits = await store.asearch(ADA, query="passport number")
    assert [(h.key, h.score is None) for h in hits] == [("a1", False), ("secret", True)]
    assert [h.key for h in await store.asearch(ADA, query="passport number", limit=1)] == ["a1"]
    # An indexed item made unindexed loses its vector.
    await store.aput(ADA, "a1", {"text": "passport number X1234567"}, index=False)
    assert len(await _ids(host, ADA)) == 1
    hits = await store.asearch(ADA, query="passport number")
    assert [(h.key, h.score) for h in hits] == [("a1", None), ("secret", None)]
