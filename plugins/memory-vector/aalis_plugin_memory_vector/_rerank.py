"""Re-ranking the vector leg's best candidates with a second, symmetric cosine.

e5 models are asymmetric: a memory is stored as a ``passage``, a question asked as a
``query``, and the cosine between the two is what the store ranks by. For recall from a
chat history both sides are short things people said, which is closer to the symmetric use
e5 was also trained for (both sides as ``query``). Re-embedding the few best candidates as
queries and ranking by the mean of the two cosines (asymmetric and symmetric) is a
re-ranker that runs offline on two cores with the model already loaded: no cross-encoder
with its weights installs from PyPI here (the packages that offer one download their
weights from a model hub at run time).

A small embedding model also has *hubs*: memories that sit near many others ("We talked
about it at dinner") and so come close to many questions without answering any. Each
candidate's **density** (the mean cosine of its nearest stored neighbours, asked with the
candidate's own query vector, within the recall's scope) is subtracted at a quarter weight,
as CSLS does for the same problem in cross-lingual word retrieval (Conneau et al., 2018): a
candidate that is close to the question *and* to little else comes first.

Measured on ``benchmarks/recall_quality.py`` (docs/host/recall.md, "Re-ranking"), which
also says why the other features the issue named are not in the score: exact-token overlap
lowered hit@1 on the paraphrase set at every weight tried, recency already breaks exact
ties, and the speaker cannot be weighed on sets whose memories are all the user's.

Only queries without an identifier or a proper name are re-ranked: when the query names
one, the lexical leg and the identifier tier order the hits (``_fusion.py``), and a blurred
cosine must not move a sibling (``AX-55813-K``, ``Tom Petersen`` for ``Tom Fischer``) above
the target. A proper name is told by its capital: a capitalised Latin word after another
word, or beside Chinese text (``Kollum的民宿``); the first word of an English sentence is not
one. On the paraphrase set this leaves out 3 of 204 queries (``Japan``, ``Norway``,
``Italy``) and costs no hit@1. A query that mixes Chinese and Latin words (``When is our
guesthouse in 建德 booked?``, ``wifi密码是多少``) names its term in the other script, which
the lexical leg decides too: none of the paraphrase set's queries does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import attrs
from aalis_api_vectorstore import VectorHit

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_PROPER = re.compile(
    rf"(?<=[\w{_HAN}] )[A-Z][a-z]+|[A-Z][a-z]+(?=[{_HAN}])|(?<=[{_HAN}])[A-Z][a-z]+"
)
_HAN_CHAR = re.compile(rf"[{_HAN}]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

#: Weight of the symmetric cosine in the re-ranking score (the asymmetric one has the rest).
SYMMETRIC_WEIGHT = 0.5
#: Weight of a candidate's density, subtracted from its score (docs/host/recall.md,
#: "Re-ranking": every weight from 0.15 to 0.3 with 10 to 30 neighbours gave paraphrase
#: hit@1 0.80 to 0.82, against 0.78 without).
DENSITY_WEIGHT = 0.25
#: How many nearest stored neighbours a candidate's density is the mean cosine of.
DENSITY_NEIGHBOURS = 20


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors (0.0 when either is all zeros or not finite)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    value = dot / norm if norm > 0 else 0.0
    return value if math.isfinite(value) else 0.0


def names_someone(query: str) -> bool:
    """True when ``query`` holds a capitalised Latin word that is not its first word (or
    one beside Chinese text): a person or a place, which the lexical leg must decide."""
    return _PROPER.search(query) is not None


def mixes_scripts(query: str) -> bool:
    """True when ``query`` holds both Chinese characters and a Latin word of two letters or
    more: the term written in the other script is a name or a term (``建德`` in an English
    question), which the lexical leg must decide."""
    return _HAN_CHAR.search(query) is not None and _LATIN_WORD.search(query) is not None


def density(own_id: str, neighbours: Sequence[VectorHit], k: int = DENSITY_NEIGHBOURS) -> float:
    """The mean cosine of the ``k`` best ``neighbours`` (a store's search with the candidate's
    vector, best first) that are not the candidate itself (``own_id``); 0.0 when it has none."""
    scores = [hit.score for hit in neighbours if hit.message_id != own_id][:k]
    return sum(scores) / len(scores) if scores else 0.0


@attrs.frozen
class Reranked:
    """One candidate after re-ranking: its hit and the blended score it was ranked by."""

    hit: VectorHit
    score: float


def rerank(
    hits: Sequence[VectorHit],
    query: Sequence[float],
    as_queries: Sequence[Sequence[float]],
    *,
    weight: float = SYMMETRIC_WEIGHT,
    densities: Sequence[float] | None = None,
    density_weight: float = DENSITY_WEIGHT,
) -> list[Reranked]:
    """``hits`` (each with the store's asymmetric cosine as ``score``) ordered by
    ``(1 - weight) * score + weight * cosine(query, as_queries[i])
    - density_weight * densities[i]`` (no density term when ``densities`` is None), best
    first; ties by the newer, then by message id, so the order never depends on the input's."""
    if len(as_queries) != len(hits):
        raise ValueError(f"{len(hits)} hits but {len(as_queries)} symmetric vectors")
    if densities is not None and len(densities) != len(hits):
        raise ValueError(f"{len(hits)} hits but {len(densities)} densities")
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be between 0 and 1, got {weight!r}")
    if not 0.0 <= density_weight <= 1.0:
        raise ValueError(f"density_weight must be between 0 and 1, got {density_weight!r}")
    penalties = [0.0] * len(hits) if densities is None else densities
    scored = [
        Reranked(
            hit,
            (1.0 - weight) * hit.score + weight * cosine(query, vector) - density_weight * penalty,
        )
        for hit, vector, penalty in zip(hits, as_queries, penalties, strict=True)
    ]
    scored.sort(key=lambda r: (-r.score, -r.hit.timestamp, r.hit.message_id))
    return scored


__all__ = [
    "DENSITY_NEIGHBOURS",
    "DENSITY_WEIGHT",
    "SYMMETRIC_WEIGHT",
    "Reranked",
    "cosine",
    "density",
    "mixes_scripts",
    "names_someone",
    "rerank",
]
