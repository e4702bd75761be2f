# ruff: noqa: RUF001  (Chinese text uses full-width punctuation, as it should)
"""The fusion of the two legs (docs/host/recall.md, "Fusion"), as a pure function, on the hit
lists the reference store really returns for near-identical messages."""

from __future__ import annotations

import re

import pytest
from aalis_api_embedding import HashEmbedder
from aalis_api_vectorstore import InMemoryVectorStore, ScopeFilter, VectorHit, VectorRecord
from aalis_plugin_memory_vector._fusion import RRF_K, fuse, identifiers

T0 = 1_700_000_000_000

#: Questions in the same words around different identifiers: the hard case of issue 27.
ORDERS = [
    "What is the status of order AX-55813-K? The order status page is blank.",
    "Still nothing for AX-55812-K, it has not arrived.",
    "What is the status of order AX-55811-K? The order status page is blank.",
    "What is the status of order AX-55812? The order status page is blank.",
    "The status of my order is unclear, the order status page is blank.",
]
NAMES = [
    "王蕾的电话是多少？王蕾的电话是多少来着？",
    "我记下了王磊，号码是138开头。",
    "王雷的电话是多少？王雷的电话是多少来着？",
]
FUNCTIONS = [
    "Who wrote parse_refund_windows? Who wrote it, and who reviewed it?",
    "parse_refund_window was written by Lena.",
]


async def vector_leg(texts: list[str], query: str) -> list[VectorHit]:
    """What the reference store returns for ``query`` over ``texts`` (hash embedder)."""
    embedder, store = HashEmbedder(), InMemoryVectorStore()
    vectors = await embedder.embed_documents(texts)
    await store.upsert(
        [
            VectorRecord(
                message_id=f"m{i}",
                session_id="s",
                timestamp=T0 + i,
                role="user",
                model_id=embedder.model_id,
                text=text,
                vector=vector,
            )
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
    )
    where = ScopeFilter(model_id=embedder.model_id, session_ids=None)
    return await store.search(await embedder.embed_query(query), len(texts), where)


def word_leg(hits: list[VectorHit], query: str) -> list[VectorHit]:
    """A lexical leg that weighs every query word alike (shared words, best first): the
    leg that loses on near-identical messages when nothing knows an identifier."""
    words = set(re.findall(r"[\w-]+", query.lower()))

    def shared(hit: VectorHit) -> int:
        return len(words & set(re.findall(r"[\w-]+", hit.text.lower())))

    found = [h for h in hits if shared(h)]
    return sorted(found, key=lambda h: (-shared(h), h.message_id))


def ids(fused: list[object]) -> list[str]:
    return [f.hit.message_id for f in fused]  # type: ignore[attr-defined]


def test_identifiers_are_told_from_words() -> None:
    found = identifiers(
        "Where is order AX-55812-K, the parse_refund_window bug, TP1351, "
        "our HttpClient and 王磊的电话 in version 2.3?"
    )
    flat = {reading for readings in found for reading in readings}
    assert {"AX-55812-K", "parse_refund_window", "TP1351", "HttpClient", "2.3"} <= flat
    assert "王磊" in flat
    assert not flat & {"Where", "order", "the", "bug", "our", "and", "in", "version"}
    assert identifiers("what did I plan for the trip?") == frozenset()
    assert identifiers("我想去北京旅游") == frozenset()  # no surname, no name
    # surnames that are mostly everyday words are not read as names
    assert identifiers("孩子周末有什么运动课？我攒钱是为了什么？我的行李在哪里？") == frozenset()


async def test_the_order_the_query_names_comes_first() -> None:
    query = "status of order AX-55812-K"
    vector = await vector_leg(ORDERS, query)
    lexical = word_leg(vector, query)
    # the hard case: both legs put a message in the query's words first, not the order
    assert vector[0].message_id != "m1"
    assert lexical[0].message_id != "m1"
    fused = fuse(vector, lexical, query)
    assert ids(fused)[0] == "m1", [f.hit.text for f in fused]
    # AX-55812 (no -K) is another identifier: it contains the token only inside a longer one
    assert fused[0].identifiers == 1
    assert all(f.identifiers == 0 for f in fused[1:])
    assert fused[0].source == "both"


async def test_the_function_the_query_names_comes_first() -> None:
    query = "who wrote parse_refund_window"
    vector = await vector_leg(FUNCTIONS, query)
    assert [h.message_id for h in vector] == ["m0", "m1"]  # the plural's wording wins
    fused = fuse(vector, word_leg(vector, query), query)
    assert ids(fused) == ["m1", "m0"]


async def test_the_chinese_name_the_query_names_comes_first() -> None:
    query = "王磊的电话是多少"
    vector = await vector_leg(NAMES, query)
    assert vector[0].message_id != "m1"  # 王蕾 and 王雷 share the query's wording
    fused = fuse(vector, [], query)  # the vector leg alone: the rule still holds
    assert ids(fused)[0] == "m1", [f.hit.text for f in fused]


async def test_without_identifiers_the_vectors_keep_their_order_and_words_only_add() -> None:
    """A paraphrase: the lexical leg matches the query's wording, not what it asks about, so
    it may not reorder the vector hits (equal-weight fusion cut hit@1 on the paraphrase set
    from 0.76 to 0.47); what only it found comes after them."""
    texts = ["lisbon hotel booked", "lisbon flight friday", "plumber monday", "hotel wifi"]
    vector = await vector_leg(texts, "lisbon hotel")
    lexical = [vector[2], vector[0]]  # a leg with a different opinion
    fused = fuse(vector[:3], [*lexical, vector[3]], "lisbon hotel")
    by_id = {f.hit.message_id: f for f in fused}
    first, third = vector[0].message_id, vector[2].message_id
    assert by_id[first].score == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert by_id[third].score == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert by_id[first].source == by_id[third].source == "both"
    assert ids(fused) == [hit.message_id for hit in vector]
    assert by_id[vector[3].message_id].source == "lexical"


async def test_each_hit_once_and_its_legs_named() -> None:
    texts = ["alpha beta", "beta gamma", "gamma delta"]
    vector = await vector_leg(texts, "alpha")
    only_words = vector[-1]
    fused = fuse(vector[:1], [only_words, only_words, vector[0]], "alpha")
    assert sorted(ids(fused)) == sorted({vector[0].message_id, only_words.message_id})
    sources = {f.hit.message_id: f.source for f in fused}
    assert sources[only_words.message_id] == "lexical"
    assert sources[vector[0].message_id] == "both"
    assert fuse([], [], "anything") == []
