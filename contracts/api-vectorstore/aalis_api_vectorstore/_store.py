"""``VectorStore``: the shape every vector backend implements (SQLite, pgvector, in-memory).

The store knows nothing about messages or embedders: it keeps vectors keyed by the id of the
message they came from, answers filtered nearest-neighbour searches, lists what it holds (so
the index can be checked against the message store), and forgets what it is told to.
``memory-vector`` decides what to index and how to rank.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from aalis_api_vectorstore._types import (
    LexicalDrift,
    ScopeFilter,
    VectorEntry,
    VectorHit,
    VectorRecord,
    VectorStoreStats,
)


@runtime_checkable
class VectorStore(Protocol):
    """A vector store. Every method is async; every rule is checked by the conformance kit.

    The rules in full: docs/recall.md ("The vectorstore contract"); how to meet them:
    docs/backends/implementing-vectorstore.md.
    """

    async def upsert(self, records: Sequence[VectorRecord]) -> int:
        """Write ``records``, all or nothing; return how many were written.

        A record is keyed by its ``message_id``: one with the id of a stored one replaces it,
        its model included (so a reindex moves it to the new space), and two records that
        share session, timestamp and role but not their id are two vectors. A wrong width
        (``DimensionMismatch``), a non-finite value (``ValueError``) or a wrong type
        (``TypeError``) anywhere in the batch writes nothing.
        """
        ...

    async def search(self, vector: Sequence[float], k: int, where: ScopeFilter) -> list[VectorHit]:
        """Up to ``k`` hits in scope, best cosine first.

        ``k`` of them whenever ``k`` records match ``where``: the filter is part of the
        query, never a post-filter of a global top-k, so a small scope among much data still
        gets its hits. There is no unfiltered search (``where`` is required). ``k`` is a
        non-negative int (0 returns nothing); the query's width must be the model's
        (``DimensionMismatch``); a model with no vectors returns nothing. Ties come back in
        no promised order.
        """
        ...

    async def delete(
        self,
        session_id: str,
        ids: Iterable[str] | None = None,
        *,
        timestamps: Iterable[int] | None = None,
    ) -> int:
        """Remove the session's vectors whose message id is in ``ids``; return how many.

        With ``timestamps`` instead (events of message stores without identity), those at
        the timestamps, every role; with neither, all of the session's; both is a
        ``ValueError``. Ids of other sessions are left alone; removing nothing is not an
        error.
        """
        ...

    async def delete_all(self) -> int:
        """Remove every vector of every model; return how many."""
        ...

    async def entries(self, session_id: str) -> list[VectorEntry]:
        """The session's vectors without their floats, every model, by timestamp then id.

        Exists so the index can be compared with the message store (``aalis vector check``).
        """
        ...

    async def sessions(self) -> list[str]:
        """The ids of the sessions that have vectors, sorted (for the same comparison)."""
        ...

    async def stats(self) -> VectorStoreStats:
        """How many vectors each ``model_id`` holds, and their width, sorted by model."""
        ...


@runtime_checkable
class DroppedSessions(Protocol):
    """Optional: a store whose schema migration had to drop vectors names their sessions.

    Vectors written before message identity have no message id and cannot be kept under
    the new key; a store that drops them at migration remembers the sessions they belonged
    to until ``acknowledge_dropped`` is called. memory-vector records those sessions as
    index gaps first, then acknowledges, so they are re-embedded from the message store
    and never silently lost (docs/recall.md, "Gaps").
    """

    async def dropped_sessions(self) -> list[str]:
        """The sessions whose vectors the migration dropped and nobody acknowledged yet."""
        ...

    async def acknowledge_dropped(self, session_ids: Sequence[str]) -> None:
        """Forget these sessions from the dropped list: their gaps are recorded elsewhere."""
        ...


@runtime_checkable
class LexicalSearch(Protocol):
    """Optional: the lexical leg of recall, beside the vectors (docs/recall.md, "Lexical leg").

    An embedding blurs exact tokens — an order number, a function name, a licence plate, a
    two-character Chinese name — so the message that carries the very token the query
    names may not be among its nearest vectors. This leg finds messages by their stored
    ``text``; memory-vector fuses its ranking with the vector leg's.
    """

    async def lexical_search(self, query: str, k: int, where: ScopeFilter) -> list[VectorHit]:
        """Up to ``k`` records in scope, best lexical match of ``query`` first.

        The terms are ``lexical_terms`` of the query and of each record's ``text``: words,
        the parts of identifiers, CJK bigrams, and whole identifiers (a digit, an inner
        ``-``/``_``/``.``, CamelCase, a Chinese name after a common surname). Ranking: a
        record holding more of the query's exact identifiers comes before every record
        holding fewer, then BM25 within that tier — so among many messages in the same
        words, the one with ``AX-55812-K`` outranks those with ``AX-55813-K``.
        ``VectorHit.score`` is that rank as a number, higher is better and always > 0;
        a record sharing no term with the query is not returned, so fewer than ``k``
        hits (or none, for a query with no terms) is normal. ``where`` means what it
        means for ``search`` and is applied inside the query, never after it: ``k`` hits
        in scope whenever ``k`` matching records exist, however many better matches lie
        outside. Deletes, ``delete_all`` and rewrites are followed at once (a rewritten
        record matches only its new text). ``k`` is checked as for ``search``; a
        ``query`` that is not a str is a ``TypeError``.
        """
        ...


@runtime_checkable
class LexicalIndexCheck(Protocol):
    """Optional, part of the lexical group: the lexical index compared with the records it
    must follow, and rebuilt from them (``aalis vector check``; docs/recall.md, "Lexical
    leg").

    A store keeps its lexical index beside its records (an FTS table, a ``tsvector``
    column); a file edited by hand, a crash of an engine that does not write both in one
    transaction, or a bug leaves them apart, and the lexical leg then misses or finds the
    wrong messages while every vector looks right. These two methods let the vector check
    see and repair that, as it does for the vectors.
    """

    async def lexical_check(self, session_id: str | None = None) -> LexicalDrift:
        """The records of ``session_id`` (every session when None) whose lexical entry is
        missing or is not the terms of their current ``text``; with None, also the entries
        of no record. Changes nothing. A ``session_id`` that is not a str or None is a
        ``TypeError``; a session with no records has no drift."""
        ...

    async def lexical_repair(self, session_id: str | None = None) -> LexicalDrift:
        """Rewrite the lexical entries of the records that ``lexical_check`` names (and,
        with None, drop the entries of no record); return what was fixed. Afterwards
        ``lexical_check`` of the same scope finds nothing and ``lexical_search`` finds
        every record by its text."""
        ...


__all__ = ["DroppedSessions", "LexicalIndexCheck", "LexicalSearch", "VectorStore"]
