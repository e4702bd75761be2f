"""Fusion of the vector and lexical legs of a recall, by rank, with an identifier rule.

Cosines and lexical scores live on scales that cannot be compared, so the two lists are
fused by rank (reciprocal rank fusion: each list gives a hit ``1 / (K + rank)``, summed;
``K = 60`` as in Cormack et al., to start, until ``benchmarks/recall_quality.py`` says
better). A rank fusion weighs every shared word alike, which loses exactly where lexical
recall is needed: among near-identical messages ("status of order AX-55813-K?" beside
"status of order AX-55812-K?") the one that carries the identifier the query names must
come first. So when the query holds identifier-like tokens (digits, inner hyphens or
underscores, CamelCase, a Chinese name), a hit that contains such a token exactly (not
inside a longer identifier: ``parse_refund_windows`` does not contain
``parse_refund_window``) ranks above every hit that only shares the wording; rank fusion
orders hits within each tier. docs/host/recall.md, "Fusion".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs
from aalis_api_vectorstore import VectorHit

#: The rank constant of reciprocal rank fusion.
RRF_K = 60

VECTOR, LEXICAL, BOTH = "vector", "lexical", "both"

# A run of identifier characters in Latin script (letters, digits, inner . - _ / # :).
_WORD = re.compile(r"[0-9A-Za-z](?:[0-9A-Za-z_\-./#:]*[0-9A-Za-z])?")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: Common Chinese surnames, for telling a name (王磊) in a query from ordinary words. Left
#: out: surnames that mostly occur inside everyday words (周末, 钱, 张, 也许, 如何, 曾经,
#: 黄色, 谢谢, 分钟, 胡萝卜, 时候, 范围, 严重, ...): a false name lifts every hit that has the
#: word, which cost two hit@1 of 99 on the Chinese set of benchmarks/recall_quality.py.
_SURNAMES = frozenset(
    "王李刘陈杨赵吴徐孙朱郭罗郑梁韩冯邓曹彭肖董袁潘蒋蔡杜魏吕沈姚卢姜崔谭汪廖贾韦邹孟邱薛闫覃"
)
#: A surname character that is the second half of a common word here is not a name (行李).
_NOT_AFTER = {"李": "行"}


@attrs.frozen
class Fused:
    """One hit of a fused list: the hit (the vector leg's copy when both legs found it),
    which legs found it, its rank-fusion score and the query identifiers it contains."""

    hit: VectorHit
    source: str
    score: float
    identifiers: int = 0


def identifiers(query: str) -> frozenset[tuple[str, ...]]:
    """The identifier-like tokens of ``query``, each as its readings: a Latin token with a
    digit, an inner hyphen or underscore, or CamelCase (one reading); a Chinese name, a
    surname and one or two characters (both readings: 王磊 or 王磊的 for "王磊的电话",
    since nothing but a dictionary tells where a name ends)."""
    found: set[tuple[str, ...]] = set()
    for match in _WORD.finditer(query):
        token = match.group()
        if (
            any(ch.isdigit() for ch in token)
            or any(ch in "-_" for ch in token)
            or _CAMEL.search(token)
        ):
            found.add((token,))
    for match in _CJK.finditer(query):
        run = match.group()
        for i, char in enumerate(run):
            readings = tuple(run[i : i + n] for n in (2, 3) if i + n <= len(run))
            after_word = i > 0 and run[i - 1] == _NOT_AFTER.get(char)
            if char in _SURNAMES and readings and not after_word:
                found.add(readings)
    return frozenset(found)


def _contains(text: str, token: str) -> bool:
    """``token`` in ``text`` as a whole identifier (case-insensitive for Latin script)."""
    if _CJK.fullmatch(token):
        return token in text
    pattern = rf"(?<![0-9A-Za-z_\-]){re.escape(token)}(?![0-9A-Za-z_]|-[0-9A-Za-z])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def fuse(
    vector: Sequence[VectorHit],
    lexical: Sequence[VectorHit],
    query: str,
    *,
    rrf_k: int = RRF_K,
) -> list[Fused]:
    """The two legs' hits (each best first) as one list, best first. When the query names an
    identifier: hits that contain more of the query's identifiers first, then by the sum of
    ``1 / (rrf_k + rank)`` over the legs that found them, then the newer. When it names none:
    the vector leg's order, then the hits only the lexical leg found (docs/host/recall.md,
    "Fusion"). A hit found by both legs is one hit (by message id)."""
    scores: dict[str, float] = {}
    hits: dict[str, VectorHit] = {}
    legs: dict[str, set[str]] = {}
    for leg, ranked in ((VECTOR, vector), (LEXICAL, lexical)):
        for rank, hit in enumerate(ranked, start=1):
            if leg in legs.setdefault(hit.message_id, set()):
                continue  # a leg that lists a hit twice counts its best rank only
            legs[hit.message_id].add(leg)
            hits.setdefault(hit.message_id, hit)
            scores[hit.message_id] = scores.get(hit.message_id, 0.0) + 1.0 / (rrf_k + rank)
    wanted = identifiers(query)
    fused = [
        Fused(
            hit=hit,
            source=BOTH if len(legs[key]) == 2 else next(iter(legs[key])),
            score=scores[key],
            identifiers=sum(
                any(_contains(hit.text, reading) for reading in readings) for readings in wanted
            ),
        )
        for key, hit in hits.items()
    ]
    if not wanted:
        # No identifier in the query: a paraphrase, where the words a lexical leg matches are
        # the query's wording, not what it asks about (measured: equal-weight fusion cut
        # hit@1 on the paraphrase set from 0.76 to 0.47). The vectors keep their order; the
        # lexical leg only adds what they did not find, after them.
        order = {hit.message_id: rank for rank, hit in enumerate(vector)}
        fused.sort(
            key=lambda f: (
                order.get(f.hit.message_id, len(order)),
                -f.score,
                -f.hit.timestamp,
                f.hit.message_id,
            )
        )
        return fused
    fused.sort(key=lambda f: (-f.identifiers, -f.score, -f.hit.timestamp, f.hit.message_id))
    return fused


__all__ = ["BOTH", "LEXICAL", "RRF_K", "VECTOR", "Fused", "fuse", "identifiers"]
