"""``VectorStore``: the shape every vector backend implements (SQLite, pgvector, in-memory).

The store knows nothing about messages or embedders: it keeps vectors keyed by the id of the
message they came from, answers filtered nearest-neighbour searches, lists what it holds (so
the index can be checked against the message store), and forgets what it is told to.
``memory-vector`` decides what to index and how to rank.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from aalis_api_vectorstore.types import (
    ScopeFilter,
    VectorEntry,
    VectorHit,
    VectorRecord,
    VectorStoreStats,
)


@runtime_checkable
class VectorStore(Protocol):
    """A vector store. Every method is async; every rule is checked by the conformance kit.

    * ``upsert`` writes the records (a record with the ``message_id`` of a stored one
      replaces it, its model included; two records that share session, timestamp and role
      but not their id are two vectors) all or nothing: a wrong width (``DimensionMismatch``), a non-finite
      value (``ValueError``) or a wrong type (``TypeError``) anywhere in the batch writes
      nothing. Returns how many records were written.
    * ``search`` returns up to ``k`` hits in scope, best cosine first; ``k`` of them whenever
      ``k`` records match ``where`` (the filter is part of the query, never a post-filter of a
      global top-k). ``k`` is a non-negative int (0 returns nothing); the query's width must
      be the model's (``DimensionMismatch``); a model with no vectors returns nothing. Ties
      come back in no promised order.
    * ``delete(session_id, ids=None, *, timestamps=None)`` removes the session's vectors
      whose message id is in ``ids``; or, for events from message stores without identity
      (``ids`` None), those at ``timestamps`` (every role: all that such an event can
      name); or, with neither, all of the session's. Giving both is a ``ValueError``.
      ``delete_all`` removes every vector. Both return how many were removed; removing
      nothing is not an error.
    * ``entries(session_id)`` lists the session's vectors without their floats (every
      model), ordered by timestamp then id; ``sessions()`` the session ids that have
      vectors, sorted. Both exist so the index can be compared with the message store.
    * ``stats`` counts vectors per ``model_id``.
    """

    async def upsert(self, records: Sequence[VectorRecord]) -> int: ...

    async def search(
        self, vector: Sequence[float], k: int, where: ScopeFilter
    ) -> list[VectorHit]: ...

    async def delete(
        self,
        session_id: str,
        ids: Iterable[str] | None = None,
        *,
        timestamps: Iterable[int] | None = None,
    ) -> int: ...

    async def delete_all(self) -> int: ...

    async def entries(self, session_id: str) -> list[VectorEntry]: ...

    async def sessions(self) -> list[str]: ...

    async def stats(self) -> VectorStoreStats: ...


@runtime_checkable
class DroppedSessions(Protocol):
    """Optional: a store whose schema migration had to drop vectors names their sessions.

    Vectors written before message identity have no message id and cannot be kept under
    the new key; a store that drops them at migration remembers the sessions they belonged
    to until ``acknowledge_dropped`` is called. memory-vector records those sessions as
    index gaps first, then acknowledges, so they are re-embedded from the message store
    and never silently lost (docs/recall.md, "Gaps").
    """

    async def dropped_sessions(self) -> list[str]: ...

    async def acknowledge_dropped(self, session_ids: Sequence[str]) -> None: ...


__all__ = ["DroppedSessions", "VectorStore"]
