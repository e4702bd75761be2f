"""The rules of the ``Embedder`` contract, as tests (see docs/recall.md)."""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import AsyncIterator, Sequence
from typing import TypeVar

import pytest
import pytest_asyncio
from aalis_api_embedding import LEXICAL, SEMANTIC, Embedder, EmbeddingError, embed_queries

C = TypeVar("C", bound=type)

#: Texts a chat history really holds, and some it should survive.
HOSTILE_TEXTS = (
    "",
    "   \n\t ",
    "nul\x00byte",
    "'; DROP TABLE vectors; --",
    '{"$where": "sleep(1000)"}',
    "emoji 🎉👩‍👩‍👧 and combining e\u0301",
    "混合文本 mixed 中文 and English",
    "right-to-left \u202eتجربة\u202c",
    "%_\\ wildcard characters",
    "long " * 10_000,
)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0.0 or nb == 0.0 else dot / (na * nb)


def _conformance(cls: C) -> C:
    for name, value in list(vars(cls).items()):
        if name.startswith("test_") and inspect.iscoroutinefunction(value):
            setattr(cls, name, pytest.mark.asyncio(value))
    return cls


def _assert_vector(vector: object, dim: int) -> None:
    assert isinstance(vector, list), f"a vector must be a list, got {type(vector).__name__}"
    assert len(vector) == dim
    assert all(isinstance(value, float) for value in vector), "vector values must be floats"
    assert all(math.isfinite(value) for value in vector), "vector values must be finite"


@_conformance
class EmbedderConformance:
    """Every rule of the ``Embedder`` contract; subclass it and override ``embedder``."""

    #: How close (cosine) one text's vector must be to itself embedded in another batch.
    #: Quantised models batch with padding, which moves vectors a little.
    batch_tolerance: float = 0.995

    @pytest_asyncio.fixture
    async def embedder(self) -> AsyncIterator[Embedder]:
        pytest.fail(
            f"{type(self).__name__} must override the `embedder` fixture with a "
            "@pytest_asyncio.fixture that yields a ready embedder"
        )
        yield  # pragma: no cover

    # -- identity ---------------------------------------------------------------------------

    async def test_declares_a_vector_space(self, embedder: Embedder) -> None:
        assert isinstance(embedder, Embedder)
        assert isinstance(embedder.model_id, str)
        assert embedder.model_id.strip(), "model_id must be a non-empty id"
        assert isinstance(embedder.dim, int)
        assert not isinstance(embedder.dim, bool)
        assert embedder.dim > 0

    async def test_kind_when_declared_is_semantic_or_lexical(self, embedder: Embedder) -> None:
        kind = getattr(embedder, "kind", None)
        assert kind in (None, SEMANTIC, LEXICAL)

    # -- shapes -----------------------------------------------------------------------------

    async def test_one_vector_of_dim_floats_per_text_in_order(self, embedder: Embedder) -> None:
        texts = ["the weather is nice today", "我喜欢喝绿茶", "invoice number 4471"]
        vectors = await embedder.embed_documents(texts)
        assert isinstance(vectors, list)
        assert len(vectors) == len(texts)
        for vector in vectors:
            _assert_vector(vector, embedder.dim)
        # In order: each row is the one its own text gets when embedded alone.
        for text, vector in zip(texts, vectors, strict=True):
            (alone,) = await embedder.embed_documents([text])
            assert cosine(alone, vector) >= self.batch_tolerance

    async def test_query_vector_has_the_same_width(self, embedder: Embedder) -> None:
        _assert_vector(await embedder.embed_query("what did I say about tea?"), embedder.dim)

    async def test_query_batches_match_single_queries_in_order(self, embedder: Embedder) -> None:
        # through the optional ``embed_queries`` when the embedder offers it (QueryBatch),
        # else the fallback: either way one query vector per text, each its own
        texts = ["what did I say about tea?", "我的火车几点出发", "invoice 4471"]
        vectors = await embed_queries(embedder, texts)
        assert isinstance(vectors, list)
        assert len(vectors) == len(texts)
        for text, vector in zip(texts, vectors, strict=True):
            _assert_vector(vector, embedder.dim)
            assert cosine(await embedder.embed_query(text), vector) >= self.batch_tolerance
        assert await embed_queries(embedder, []) == []
        with pytest.raises(TypeError):
            await embed_queries(embedder, "a str is not a batch")

    async def test_an_empty_batch_returns_no_vectors(self, embedder: Embedder) -> None:
        assert await embedder.embed_documents([]) == []

    async def test_deterministic(self, embedder: Embedder) -> None:
        text = "my sister's birthday is on the fourth of May"
        first = await embedder.embed_documents([text])
        second = await embedder.embed_documents([text])
        assert cosine(first[0], second[0]) >= 0.9999
        q1, q2 = await embedder.embed_query(text), await embedder.embed_query(text)
        assert cosine(q1, q2) >= 0.9999

    async def test_a_text_is_closer_to_itself_than_to_an_unrelated_one(
        self, embedder: Embedder
    ) -> None:
        docs = await embedder.embed_documents(
            ["the cat sat on the warm mat", "quarterly corporate tax filing deadline"]
        )
        query = await embedder.embed_query("the cat sat on the warm mat")
        assert cosine(query, docs[0]) > cosine(query, docs[1])

    async def test_concurrent_calls_give_the_same_vectors(self, embedder: Embedder) -> None:
        texts = [f"note number {i} about gardening" for i in range(4)]
        alone = [await embedder.embed_documents([text]) for text in texts]
        together = await asyncio.gather(*(embedder.embed_documents([text]) for text in texts))
        for a, b in zip(alone, together, strict=True):
            assert cosine(a[0], b[0]) >= 0.9999

    # -- bad and hostile input ----------------------------------------------------------------

    async def test_a_str_is_not_a_batch(self, embedder: Embedder) -> None:
        with pytest.raises(TypeError):
            await embedder.embed_documents("not a list")
        with pytest.raises(TypeError):
            await embedder.embed_documents(b"bytes")  # type: ignore[arg-type]

    async def test_non_str_texts_raise_type_error(self, embedder: Embedder) -> None:
        for bad in (None, 42, b"bytes", ["nested"]):
            with pytest.raises(TypeError):
                await embedder.embed_documents(["fine", bad])  # type: ignore[list-item]
            with pytest.raises(TypeError):
                await embedder.embed_query(bad)  # type: ignore[arg-type]

    async def test_hostile_texts_embed_to_valid_vectors(self, embedder: Embedder) -> None:
        vectors = await embedder.embed_documents(list(HOSTILE_TEXTS))
        assert len(vectors) == len(HOSTILE_TEXTS)
        for vector in vectors:
            _assert_vector(vector, embedder.dim)
        for text in HOSTILE_TEXTS:
            _assert_vector(await embedder.embed_query(text), embedder.dim)

    async def test_a_lone_surrogate_embeds_or_fails_cleanly(self, embedder: Embedder) -> None:
        # Python strs may hold lone surrogates (from surrogateescape decoding); an embedder
        # either embeds them or says so with ValueError / EmbeddingError, never a crash of
        # another kind.
        try:
            vectors = await embedder.embed_documents(["broken \ud800 surrogate"])
        except (ValueError, EmbeddingError):
            return
        _assert_vector(vectors[0], embedder.dim)


__all__ = ["HOSTILE_TEXTS", "EmbedderConformance", "cosine"]
