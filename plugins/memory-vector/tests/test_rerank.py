# ruff: noqa: RUF001  (Chinese queries use full-width punctuation, as users type them)
"""The re-ranking step (docs/host/recall.md, "Re-ranking"): the vector leg's best candidates
re-embedded as queries and ordered by the mean of the two cosines less a quarter of their
density, for queries without an identifier and semantic embedders only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from aalis_api_embedding import embedding
from aalis_api_memory import memory
from aalis_api_vectorstore import InMemoryVectorStore, VectorHit, recall, vectorstore
from aalis_plugin_memory_vector import MemoryVector
from aalis_plugin_memory_vector._rerank import (
    cosine,
    density,
    mixes_scripts,
    names_someone,
    rerank,
)
from aalis_schema_message import Message, new_message_id

from aalis_core import Host, Plugin

from .conftest import inmemory

T0 = 1_700_000_000_000
QUERY = "what pet do we have"
PASSAGES = {
    # as stored (passage side): the wrong memory is nearer the query
    "We adopted a grey tabby cat called Pixel.": [0.6, 0.8, 0.0],
    "We talked about pets at dinner.": [0.8, 0.6, 0.0],
    "order AX-1 is late": [0.05, 0.0, 1.0],
    "order AX-2 is late": [0.1, 0.0, 1.0],
}
AS_QUERIES = {
    # the same texts embedded as queries (symmetric side): the right memory is nearer
    "We adopted a grey tabby cat called Pixel.": [1.0, 0.0, 0.0],
    "We talked about pets at dinner.": [0.0, 1.0, 0.0],
    "order AX-1 is late": [1.0, 0.0, 0.0],
    "order AX-2 is late": [0.0, 1.0, 0.0],
}


#: Extra queries a test asks, with their vectors.
QUERY_VECTORS: dict[str, list[float]] = {}


def _hit(message_id: str, score: float, timestamp: int = T0) -> VectorHit:
    return VectorHit(
        message_id=message_id,
        session_id="s",
        timestamp=timestamp,
        role="user",
        model_id="m",
        text=message_id,
        platform=None,
        user_id=None,
        score=score,
    )


def test_rerank_orders_by_the_mean_of_both_cosines() -> None:
    hits = [_hit("near-as-passage", 0.8), _hit("near-as-query", 0.6)]
    ranked = rerank(hits, [1.0, 0.0], [[0.0, 1.0], [1.0, 0.0]])
    assert [r.hit.message_id for r in ranked] == ["near-as-query", "near-as-passage"]
    assert ranked[0].score == pytest.approx(0.8)  # (0.6 + 1.0) / 2
    # weight 0 is the store's order
    plain = rerank(hits, [1.0, 0.0], [[0.0, 1.0], [1.0, 0.0]], weight=0.0)
    assert [r.hit.message_id for r in plain] == ["near-as-passage", "near-as-query"]


def test_rerank_subtracts_a_quarter_of_each_candidates_density() -> None:
    # the generic memory is nearer on both cosines, but near everything else too
    hits = [_hit("generic", 0.8), _hit("specific", 0.7)]
    vectors = [[0.6, 0.8], [0.6, 0.8]]
    ranked = rerank(hits, [0.6, 0.8], vectors, densities=[0.7, 0.1])
    assert [r.hit.message_id for r in ranked] == ["specific", "generic"]
    assert ranked[0].score == pytest.approx(0.85 - 0.025)  # (0.7 + 1.0) / 2 - 0.1 / 4
    # without densities, the mean of the two cosines alone
    plain = rerank(hits, [0.6, 0.8], vectors)
    assert [r.hit.message_id for r in plain] == ["generic", "specific"]
    with pytest.raises(ValueError, match="densities"):
        rerank(hits, [0.6, 0.8], vectors, densities=[0.1])
    with pytest.raises(ValueError, match="density_weight"):
        rerank(hits, [0.6, 0.8], vectors, densities=[0.1, 0.1], density_weight=-0.1)


def test_density_is_the_mean_of_the_best_neighbours_but_itself() -> None:
    near = [_hit("self", 1.0), _hit("a", 0.8), _hit("b", 0.6), _hit("c", 0.1)]
    assert density("self", near, k=2) == pytest.approx(0.7)
    assert density("self", near) == pytest.approx(0.5)  # fewer than k: the ones there are
    assert density("self", [_hit("self", 1.0)]) == 0.0  # alone in its scope


def test_rerank_breaks_ties_by_the_newer_then_the_id() -> None:
    hits = [_hit("b", 0.5, T0), _hit("a", 0.5, T0), _hit("c", 0.5, T0 + 1)]
    ranked = rerank(hits, [1.0, 0.0], [[1.0, 0.0]] * 3)
    assert [r.hit.message_id for r in ranked] == ["c", "a", "b"]


def test_rerank_refuses_mismatched_input() -> None:
    with pytest.raises(ValueError, match="2 hits but 1"):
        rerank([_hit("a", 0.1), _hit("b", 0.2)], [1.0], [[1.0]])
    with pytest.raises(ValueError, match="weight"):
        rerank([_hit("a", 0.1)], [1.0], [[1.0]], weight=1.5)
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("When does Jon Fischer start?", True),
        ("When is our guesthouse in Baflo booked?", True),
        ("Kollum的民宿订在哪天？", True),
        ("Ida Fischer什么时候入职？", True),
        ("What is the name of our pet?", False),  # the first word's capital is no name
        ("which snack is dangerous for my child", False),
        ("我的孩子对什么过敏？", False),
    ],
)
def test_a_proper_name_is_told_by_its_capital(query: str, named: bool) -> None:
    assert names_someone(query) is named


@pytest.mark.parametrize(
    ("query", "mixed"),
    [
        ("When is our guesthouse in 建德 booked?", True),
        ("高鹏去哪里出差 for work", True),
        ("wifi密码是多少？", True),
        ("我的孩子对什么过敏？", False),
        ("Which food must I avoid?", False),
        ("我的车是2016年的吗", False),  # digits are not words
    ],
)
def test_a_query_in_two_scripts_is_told(query: str, mixed: bool) -> None:
    assert mixes_scripts(query) is mixed


class TableEmbedder:
    """A semantic embedder with fixed vectors: passages and queries differ, as in e5."""

    model_id = "table-3d"
    dim = 3

    def __init__(self, kind: str = "semantic") -> None:
        self.kind = kind
        self.fail_queries = False
        self.query_calls: list[str] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [PASSAGES[text] for text in texts]

    async def embed_query(self, text: str) -> list[float]:
        self.query_calls.append(text)
        if text == QUERY:
            return [1.0, 0.0, 0.0]
        if text in QUERY_VECTORS:
            return QUERY_VECTORS[text]
        if text == "when is order AX-1 due":
            return [0.0, 0.0, 1.0]
        if self.fail_queries:
            raise RuntimeError("model crashed")
        return AS_QUERIES[text]


class _VectorsOnly(InMemoryVectorStore):
    """The reference store without its lexical leg: the order is the vector leg's."""

    def __getattribute__(self, name: str) -> Any:
        if name == "lexical_search":
            raise AttributeError(name)
        return super().__getattribute__(name)


class Providers(Plugin):
    name = "test-rerank-providers"
    provides = (embedding, vectorstore)

    def __init__(self, embedder: TableEmbedder, store: InMemoryVectorStore | None = None) -> None:
        self.embedder = embedder
        self.store = store

    async def start(self, ctx: Any) -> None:
        ctx.provide(embedding, self.embedder)
        ctx.provide(vectorstore, self.store if self.store is not None else _VectorsOnly())


async def _world(embedder: TableEmbedder, depth: int | None) -> AsyncIterator[Any]:
    config: dict[str, Any] = {"cross_session_mode": "isolated", "neighbours": 0}
    if depth is not None:
        config["rerank_depth"] = depth
    plugin = MemoryVector()
    host = Host(
        {"plugins": {"memory-vector": config}},
        [inmemory.MemoryInmemory(), Providers(embedder), plugin],
        discover=False,
    )
    async with host:
        said = [
            Message(role="user", content=text, timestamp=T0 + i * 60_000, id=new_message_id())
            for i, text in enumerate(PASSAGES)
        ]
        mem = host.capability(memory).use
        for message in said:
            await mem.save_message("s", message)
        await host.emit("memory_messages_saved", session_id="s", messages=said)
        assert plugin.indexer is not None
        assert await plugin.indexer.settle(5.0)
        yield host.capability(recall).use


async def _first(embedder: TableEmbedder, depth: int | None, query: str = QUERY) -> str:
    async for service in _world(embedder, depth):
        hits = await service.recall("s", query, k=2)
        return str(hits[0].message.content)
    raise AssertionError("unreachable")


async def test_recall_reranks_by_default() -> None:
    embedder = TableEmbedder()
    assert await _first(embedder, None) == "We adopted a grey tabby cat called Pixel."
    assert "We talked about pets at dinner." in embedder.query_calls


async def test_rerank_depth_zero_keeps_the_stores_order() -> None:
    embedder = TableEmbedder()
    assert await _first(embedder, 0) == "We talked about pets at dinner."
    assert embedder.query_calls == [QUERY]


async def test_a_query_naming_an_identifier_is_not_reranked() -> None:
    # the identifier tier orders such queries; the blurred cosine must not move them
    embedder = TableEmbedder()
    await _first(embedder, None, "when is order AX-1 due")
    assert embedder.query_calls == ["when is order AX-1 due"]


async def test_a_query_naming_someone_is_not_reranked() -> None:
    embedder = TableEmbedder()
    query = "what pet do we have called Pixel"
    assert names_someone(query)
    QUERY_VECTORS[query] = [1.0, 0.0, 0.0]
    try:
        assert await _first(embedder, None, query) == "We talked about pets at dinner."
        assert embedder.query_calls == [query]
    finally:
        del QUERY_VECTORS[query]


async def test_a_query_in_two_scripts_is_not_reranked() -> None:
    embedder = TableEmbedder()
    query = "what pet do we have 宠物"
    QUERY_VECTORS[query] = [1.0, 0.0, 0.0]
    try:
        assert await _first(embedder, None, query) == "We talked about pets at dinner."
        assert embedder.query_calls == [query]
    finally:
        del QUERY_VECTORS[query]


async def test_a_lexical_embedder_is_not_reranked() -> None:
    embedder = TableEmbedder(kind="lexical")
    assert await _first(embedder, None) == "We talked about pets at dinner."
    assert embedder.query_calls == [QUERY]


async def test_a_failing_reranker_leaves_the_stores_order() -> None:
    embedder = TableEmbedder()
    embedder.fail_queries = True
    assert await _first(embedder, None) == "We talked about pets at dinner."


#: A hub: "We talked about it all evening." is the nearest passage to the question on both
#: cosines, but also near every "we talked" memory; the specific memory is a little less
#: near the question and near nothing else.
HUB_QUERY = "what did we decide about the kitchen"
HUB = {
    # text: (as stored, as a query)
    "We talked about it all evening.": ([0.8, 0.6, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]),
    "We chose green tiles for the kitchen.": ([0.7, 0.0, 0.714, 0.0], [0.6, 0.0, 0.8, 0.0]),
    "We talked about the weather.": ([0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]),
    "We talked about school.": ([0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
    "We talked about the cousins.": ([0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
}


class HubEmbedder(TableEmbedder):
    model_id = "table-4d"
    dim = 4

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [HUB[text][0] for text in texts]

    async def embed_query(self, text: str) -> list[float]:
        self.query_calls.append(text)
        return [1.0, 0.0, 0.0, 0.0] if text == HUB_QUERY else HUB[text][1]


class _DensityFails(_VectorsOnly):
    """A store whose searches fail after the first one (the vector leg's)."""

    def __init__(self) -> None:
        super().__init__()
        self.searches = 0

    async def search(self, vector: Any, k: int, where: Any) -> list[VectorHit]:
        self.searches += 1
        if self.searches > 1:
            raise RuntimeError("store went away")
        return await super().search(vector, k, where)


async def _hub_first(depth: int, store: InMemoryVectorStore | None = None) -> str:
    embedder = HubEmbedder()
    config = {"cross_session_mode": "isolated", "neighbours": 0, "rerank_depth": depth}
    host = Host(
        {"plugins": {"memory-vector": config}},
        [inmemory.MemoryInmemory(), Providers(embedder, store), plugin := MemoryVector()],
        discover=False,
    )
    async with host:
        said = [
            Message(role="user", content=text, timestamp=T0 + i * 60_000, id=new_message_id())
            for i, text in enumerate(HUB)
        ]
        for message in said:
            await host.capability(memory).use.save_message("s", message)
        await host.emit("memory_messages_saved", session_id="s", messages=said)
        assert plugin.indexer is not None
        assert await plugin.indexer.settle(5.0)
        hits = await host.capability(recall).use.recall("s", HUB_QUERY, k=2)
        return str(hits[0].message.content)


async def test_a_memory_near_everything_yields_to_the_specific_one() -> None:
    # mean of the cosines: the hub 0.7, the kitchen 0.65; its density (0.71 against 0.12)
    # puts the kitchen first
    assert await _hub_first(10) == "We chose green tiles for the kitchen."
    # the store's order without re-ranking: the hub
    assert await _hub_first(0) == "We talked about it all evening."


async def test_a_store_failing_the_densities_leaves_the_mean() -> None:
    # the re-ranking goes on with the two cosines alone (logged), never fails the recall
    store = _DensityFails()
    assert await _hub_first(10, store) == "We talked about it all evening."
    assert store.searches == 2


class BatchingEmbedder(TableEmbedder):
    """A ``TableEmbedder`` that also offers the optional ``embed_queries``."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return [AS_QUERIES[text] for text in texts]


async def test_candidates_are_embedded_in_one_batch_when_the_embedder_can() -> None:
    embedder = BatchingEmbedder()
    assert await _first(embedder, None) == "We adopted a grey tabby cat called Pixel."
    assert embedder.query_calls == [QUERY]  # the question alone, one at a time
    assert len(embedder.batches) == 1
    assert sorted(embedder.batches[0]) == sorted(PASSAGES)
