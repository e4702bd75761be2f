"""``InMemoryVectorStore``: the reference store, kept in process memory.

It is the executable reading of the contract (pure Python, exact cosine, the filter applied
before ranking) for tests and for consumers that want a store without a file. It keeps
nothing past the process.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import attrs

from aalis_api_vectorstore._errors import DimensionMismatch
from aalis_api_vectorstore._lexical import (
    IDENTIFIER_WEIGHT,
    Bm25Column,
    LexicalTerms,
    lexical_terms,
    tier_score,
)
from aalis_api_vectorstore._types import (
    LexicalDrift,
    ModelStats,
    ScopeFilter,
    VectorEntry,
    VectorHit,
    VectorKey,
    VectorRecord,
    VectorStoreStats,
)
from aalis_api_vectorstore._validation import (
    batch_dims,
    check_delete,
    check_dims,
    check_k,
    check_records,
    check_session_id,
    check_where,
    float_row,
)


@attrs.frozen(kw_only=True)
class _Stored:
    record: VectorRecord
    row: tuple[float, ...]
    norm: float
    terms: LexicalTerms


class InMemoryVectorStore:
    """Every record in a dict by message id; searches scan the records in scope."""

    volatile = True

    def __init__(self) -> None:
        self._rows: dict[VectorKey, _Stored] = {}

    def _dims(self) -> dict[str, int]:
        dims: dict[str, int] = {}
        for stored in self._rows.values():
            dims.setdefault(stored.record.model_id, len(stored.row))
        return dims

    async def upsert(self, records: Sequence[VectorRecord]) -> int:
        batch = check_records(records)
        dims = batch_dims(batch)
        check_dims(dims, self._dims())
        prepared: list[_Stored] = []
        for record in batch:
            row = float_row(record.vector)
            norm = math.sqrt(sum(value * value for value in row))
            prepared.append(
                _Stored(record=record, row=row, norm=norm, terms=lexical_terms(record.text))
            )
        for stored in prepared:
            self._rows[stored.record.key] = stored
        return len(prepared)

    async def search(self, vector: Sequence[float], k: int, where: ScopeFilter) -> list[VectorHit]:
        k = check_k(k)
        where = check_where(where)
        query = float_row(vector, what="query vector")
        dim = self._dims().get(where.model_id)
        if dim is not None and dim != len(query):
            raise DimensionMismatch(where.model_id, dim, len(query))
        if k == 0 or dim is None or where.is_empty:
            return []
        qnorm = math.sqrt(sum(value * value for value in query))
        scored: list[tuple[float, _Stored]] = []
        for stored in self._rows.values():
            record = stored.record
            if not where.matches(
                session_id=record.session_id,
                role=record.role,
                model_id=record.model_id,
                platform=record.platform,
                user_id=record.user_id,
            ):
                continue
            if qnorm == 0.0 or stored.norm == 0.0:
                score = 0.0
            else:
                dot = sum(a * b for a, b in zip(query, stored.row, strict=True))
                score = dot / (qnorm * stored.norm)
            scored.append((score, stored))
        scored.sort(
            key=lambda item: (-item[0], -item[1].record.timestamp, item[1].record.message_id)
        )
        return [_hit(stored.record, score) for score, stored in scored[:k]]

    async def lexical_search(self, query: str, k: int, where: ScopeFilter) -> list[VectorHit]:
        """BM25 over every stored record (as FTS5 counts its corpus), the identifier tier
        first; the scope filter picks the candidates before anything is ranked."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        k = check_k(k)
        where = check_where(where)
        wanted = lexical_terms(query)
        if k == 0 or where.is_empty or not wanted:
            return []
        words, identifiers = set(wanted.words), set(wanted.identifiers)
        stored_rows = list(self._rows.values())
        word_stats = Bm25Column([stored.terms.words for stored in stored_rows])
        id_stats = Bm25Column([stored.terms.identifiers for stored in stored_rows])
        scored: list[tuple[float, _Stored]] = []
        for stored in stored_rows:
            record = stored.record
            if not where.matches(
                session_id=record.session_id,
                role=record.role,
                model_id=record.model_id,
                platform=record.platform,
                user_id=record.user_id,
            ):
                continue
            bm25 = word_stats.score(words, stored.terms.words) + IDENTIFIER_WEIGHT * (
                id_stats.score(identifiers, stored.terms.identifiers)
            )
            if bm25 <= 0.0:
                continue
            tier = len(identifiers.intersection(stored.terms.identifiers))
            scored.append((tier_score(tier, bm25), stored))
        scored.sort(
            key=lambda item: (-item[0], -item[1].record.timestamp, item[1].record.message_id)
        )
        return [_hit(stored.record, score) for score, stored in scored[:k]]

    async def delete(
        self,
        session_id: str,
        ids: Iterable[str] | None = None,
        *,
        timestamps: Iterable[int] | None = None,
    ) -> int:
        session_id, wanted_ids, wanted_ts = check_delete(session_id, ids, timestamps)
        by_id = set(wanted_ids) if wanted_ids is not None else None
        by_ts = set(wanted_ts) if wanted_ts is not None else None
        doomed = [
            key
            for key, stored in self._rows.items()
            if stored.record.session_id == session_id
            and (by_id is None or key in by_id)
            and (by_ts is None or stored.record.timestamp in by_ts)
        ]
        for key in doomed:
            del self._rows[key]
        return len(doomed)

    async def entries(self, session_id: str) -> list[VectorEntry]:
        session_id = check_session_id(session_id)
        found = [
            VectorEntry(
                message_id=r.message_id,
                session_id=r.session_id,
                timestamp=r.timestamp,
                role=r.role,
                model_id=r.model_id,
                text=r.text,
            )
            for r in (stored.record for stored in self._rows.values())
            if r.session_id == session_id
        ]
        found.sort(key=lambda e: (e.timestamp, e.message_id))
        return found

    def _drift(self, session_id: str | None) -> tuple[list[VectorKey], list[VectorKey]]:
        if session_id is not None:
            check_session_id(session_id)
        missing: list[VectorKey] = []
        stale: list[VectorKey] = []
        for key, stored in self._rows.items():
            if session_id is not None and stored.record.session_id != session_id:
                continue
            wanted = lexical_terms(stored.record.text)
            if stored.terms == wanted:
                continue
            (missing if wanted and not stored.terms else stale).append(key)
        return missing, stale

    async def lexical_check(self, session_id: str | None = None) -> LexicalDrift:
        # The terms live on the record itself, so there is never an entry of no record.
        missing, stale = self._drift(session_id)
        return LexicalDrift(missing=missing, stale=stale)

    async def lexical_repair(self, session_id: str | None = None) -> LexicalDrift:
        missing, stale = self._drift(session_id)
        for key in (*missing, *stale):
            stored = self._rows[key]
            self._rows[key] = attrs.evolve(stored, terms=lexical_terms(stored.record.text))
        return LexicalDrift(missing=missing, stale=stale)

    async def sessions(self) -> list[str]:
        return sorted({stored.record.session_id for stored in self._rows.values()})

    async def delete_all(self) -> int:
        count = len(self._rows)
        self._rows.clear()
        return count

    async def stats(self) -> VectorStoreStats:
        counts: dict[str, int] = {}
        for stored in self._rows.values():
            counts[stored.record.model_id] = counts.get(stored.record.model_id, 0) + 1
        dims = self._dims()
        return VectorStoreStats(
            models=tuple(
                ModelStats(model_id=model_id, count=counts[model_id], dim=dims[model_id])
                for model_id in sorted(counts)
            )
        )


def _hit(record: VectorRecord, score: float) -> VectorHit:
    return VectorHit(
        message_id=record.message_id,
        session_id=record.session_id,
        timestamp=record.timestamp,
        role=record.role,
        model_id=record.model_id,
        text=record.text,
        platform=record.platform,
        user_id=record.user_id,
        score=score,
    )


__all__ = ["InMemoryVectorStore"]
