"""``Embedder``: the one shape every text-embedding provider implements.

A vector is only meaningful next to vectors of the same model, so every embedder names its
vector space (``model_id``) and its width (``dim``); the vector store stamps ``model_id`` on
every record and never compares vectors across spaces. Documents and queries are embedded by
separate calls because asymmetric models (the e5 family) encode them differently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

#: What an embedder's vectors capture. ``lexical`` ones (character n-gram hashing) match
#: shared spelling, not meaning; consumers show the label so nobody mistakes one for the other.
EmbedderKind = Literal["semantic", "lexical"]
SEMANTIC: EmbedderKind = "semantic"
LEXICAL: EmbedderKind = "lexical"


@runtime_checkable
class Embedder(Protocol):
    """A text embedder.

    Both calls return one vector of ``dim`` finite floats per input, in input order, or raise
    an ``EmbeddingError`` subclass — never a transport or model-library exception. A ``str``
    passed where a sequence of texts is expected, or a non-``str`` text, raises ``TypeError``
    before any work is done. An empty sequence returns ``[]``. Vectors need not be unit
    length; stores compare them by cosine. The rules in full: docs/recall.md ("The embedding
    contract").
    """

    @property
    def model_id(self) -> str:
        """The vector space's id, stamped on every stored vector, e.g. ``"e5-small-q4"``.

        It changes whenever the vectors would (another model, another dimension, another
        preprocessing), so a model swap never mixes spaces silently.
        """
        ...

    @property
    def dim(self) -> int:
        """The number of floats in every vector this embedder returns."""
        ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for texts to be stored and found later, one per text, in input order.

        Separate from ``embed_query`` because asymmetric models (e5) encode a stored text
        and a question differently. ``[]`` for an empty batch; a ``str`` as the batch (a
        sequence of characters to Python) is a ``TypeError``.
        """
        ...

    async def embed_query(self, text: str) -> list[float]:
        """The vector for a search query, comparable with ``embed_documents``' vectors."""
        ...


@runtime_checkable
class QueryBatch(Protocol):
    """The optional batch form of ``embed_query``: an embedder may offer it when embedding
    several queries at once is cheaper than one at a time (a local model runs one batch in
    about half the time of its texts one by one). Not part of ``Embedder``, so embedders
    written against the four required members keep working; callers use
    ``embed_queries(embedder, texts)``, which falls back to ``embed_query`` per text.
    docs/recall.md ("The embedding contract")."""

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """One query vector per text, in input order, each what ``embed_query`` gives that
        text (within a batch's rounding); ``[]`` for an empty batch; a ``str`` as the
        batch is a ``TypeError``."""
        ...


async def embed_queries(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Query vectors for ``texts``, in order: the embedder's ``embed_queries`` when it
    offers one (``QueryBatch``), else ``embed_query`` for each text in turn."""
    from aalis_api_embedding._validation import check_texts

    if isinstance(embedder, QueryBatch):
        return await embedder.embed_queries(texts)
    return [await embedder.embed_query(text) for text in check_texts(texts)]


def embedder_kind(embedder: object) -> EmbedderKind | None:
    """The embedder's ``kind`` attribute when it declares a known one, else None.

    ``kind`` is optional (the protocol does not require it) so that third-party embedders
    written against the four required members keep working.
    """
    kind = getattr(embedder, "kind", None)
    if kind == SEMANTIC:
        return SEMANTIC
    if kind == LEXICAL:
        return LEXICAL
    return None


__all__ = [
    "LEXICAL",
    "SEMANTIC",
    "Embedder",
    "EmbedderKind",
    "QueryBatch",
    "embed_queries",
    "embedder_kind",
]
