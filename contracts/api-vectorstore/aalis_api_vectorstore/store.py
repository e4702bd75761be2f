"""``VectorStore``: the shape every vector backend implements (SQLite, pgvector, in-memory).

The store knows nothing about messages or embedders: it keeps vectors keyed by the message
they came from, answers filtered nearest-neighbour searches, and forgets what it is told to.
``memory-vector`` decides what to index and how to rank.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from aalis_api_vectorstore.types import ScopeFilter, VectorHit, VectorRecord, VectorStoreStats


@runtime_checkable
class VectorStore(Protocol):
    """A vector store. Every method is async; every rule is checked by the conformance kit.

    * ``upsert`` writes the records (a record with the key of a stored one replaces it, its
      model included) all or nothing: a wrong width (``DimensionMismatch``), a non-finite
      value (``ValueError``) or a wrong type (``TypeError``) anywhere in the batch writes
      nothing. Returns how many records were written.
    * ``search`` returns up to ``k`` hits in scope, best cosine first; ``k`` of them whenever
      ``k`` records match ``where`` (the filter is part of the query, never a post-filter of a
      global top-k). ``k`` is a non-negative int (0 returns nothing); the query's width must
      be the model's (``DimensionMismatch``); a model with no vectors returns nothing. Ties
      come back in no promised order.
    * ``delete(session_id, timestamps=None)`` removes the session's vectors (every role) at
      those timestamps, or all of them; ``delete_all`` removes every vector. Both return how
      many were removed; removing nothing is not an error.
    * ``stats`` counts vectors per ``model_id``.
    """

    async def upsert(self, records: Sequence[VectorRecord]) -> int: ...

    async def search(
        self, vector: Sequence[float], k: int, where: ScopeFilter
    ) -> list[VectorHit]: ...

    async def delete(self, session_id: str, timestamps: Iterable[int] | None = None) -> int: ...

    async def delete_all(self) -> int: ...

    async def stats(self) -> VectorStoreStats: ...


__all__ = ["VectorStore"]
