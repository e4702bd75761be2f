# ruff: noqa: RUF001  (Chinese queries use full-width punctuation, as users type them)
"""The re-ranking step (docs/host/recall.md, "Re-ranking"): the vector leg's best candidates
re-embedded as queries and ordered by the mean of the two cosines, for queries without an
identifier and semantic embedders only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from aalis_api_embedding import embedding
from aalis_api_memory import memory
from aalis_api_vectorstore import InMemoryVectorStore, VectorHit, recall, vectorstore
from aalis_plugin_memory_vector import MemoryVector
from aalis_plugin_memory_vector._rerank import cosine, names_someone, rerank
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

    def __init__(self, embedder: TableEmbedder) -> None:
        self.embedder = embedder

    async def start(self, ctx: Any) -> None:
        ctx.provide(embedding, self.embedder)
        ctx.provide(vectorstore, _VectorsOnly())


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


async def test_a_lexical_embedder_is_not_reranked() -> None:
    embedder = TableEmbedder(kind="lexical")
    assert await _first(embedder, None) == "We talked about pets at dinner."
    assert embedder.query_calls == [QUERY]


async def test_a_failing_reranker_leaves_the_stores_order() -> None:
    embedder = TableEmbedder()
    embedder.fail_queries = True
    assert await _first(embedder, None) == "We talked about pets at dinner."
