"""The terms of the lexical leg: what a message is indexed under and what a query weighs.

PostgreSQL's own parsers cannot serve recall here: ``to_tsvector`` does not segment Chinese
(a run of Han characters is one "word"), splits ``AX-55812-K`` and stems ``windows`` to
``window``, and ``pg_trgm`` needs three characters, so a two-character name (王磊) has no
trigram of its own. So the terms are computed here, stored verbatim in a ``tsvector`` column
(``array_to_tsvector``: no parsing, no stemming) under a GIN index, and the query is a
disjunction of the same terms (docs/backends/postgres.md, "Lexical search").

* A word is lower-cased; a few English function words are not indexed.
* An identifier (a token with a digit, a joiner ``-`` ``_`` ``.`` ``/`` ``:`` inside, or a
  capital after a small letter: ``AX-55812-K``, ``parse_refund_window``, ``parseRefund``,
  ``v2.3``) is indexed whole *and* by its parts, so ``55812`` finds ``AX-55812-K`` while the
  whole token tells ``AX-55812-K`` from ``AX-55813-K``.
* A run of CJK characters is indexed by its bigrams and its characters: 王磊 is the bigram
  ``王磊``, which 王蕾 does not have.

A query weighs its terms: a whole identifier far above its parts, a number and a CJK bigram
above a word, a single CJK character least; the store multiplies in how rare each term is among
the candidates, so the message that carries the exact identifier comes first among many that
repeat the query's wording around another one.
"""

from __future__ import annotations

import itertools
import re

from aalis_api_vectorstore import lexical_terms

#: Changes to the rules below need a schema migration that re-indexes (``_schema.py``).
TERMS_VERSION = 1

#: Longest term kept (longer tokens are cut: ``tsvector`` lexemes must stay small).
MAX_TERM = 64
#: Most distinct terms indexed for one message (a ``tsvector`` is at most 1 MB).
MAX_DOCUMENT_TERMS = 8_000
#: Most bytes of terms indexed for one message (well under the 1 MB of a ``tsvector``).
MAX_DOCUMENT_BYTES = 256 * 1024
#: Most terms one query weighs (the longest queries are pasted text: their first terms).
MAX_QUERY_TERMS = 32

WORD = 1.0
IDENTIFIER = 4.0
NUMBER = 2.0
PART = 0.5
CJK_BIGRAM = 1.5
CJK_CHAR = 0.3

_CJK = (
    "\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u3130-\u318f"
    "\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0002ebef\U00030000-\U000323af"
)
# A token: letters, digits and underscores, joined by single - . / : between them; CJK runs apart.
_TOKEN = re.compile(rf"[{_CJK}]+|(?:(?![{_CJK}])\w)+(?:[-./:](?:(?![{_CJK}])\w)+)*")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
# A joiner, a digit beside a letter, or camelCase (ASCII: a capital after a small letter).
_IDENTIFIER = re.compile(r"[-./:_]|\d[^\W\d]|[^\W\d]\d|[a-z][A-Z]")
_PARTS = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_]+")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be been but by did do does for from had has have he her his how i"
        " if in into is it its me my of on or our she so that the their them then there these"
        " they this to was we were what when where which who why will with you your",
    )
)


def _is_identifier(token: str) -> bool:
    return _IDENTIFIER.search(token) is not None


def _parts(token: str) -> list[str]:
    out: list[str] = []
    for piece in _PARTS.findall(token):
        out.extend(_CAMEL.findall(piece) if piece.isascii() else [piece])
    return out


def weighted_terms(text: str) -> dict[str, float]:
    """Each term of ``text`` with its weight as a query term (the highest when repeated)."""
    terms: dict[str, float] = {}

    def add(term: str, weight: float) -> None:
        term = term.lower()[:MAX_TERM]
        if term and terms.get(term, 0.0) < weight:
            terms[term] = weight

    for token in _TOKEN.findall(text):
        if _CJK_RUN.match(token):
            for char in token:
                add(char, CJK_CHAR)
            for first, second in itertools.pairwise(token):
                add(first + second, CJK_BIGRAM)
            # A Chinese name (the contract's shared rule: a common surname and the next
            # characters) is an identifier: 王磊 must outrank 王蕾 in the same words.
            for name in lexical_terms(token).identifiers:
                for first, second in itertools.pairwise(name):
                    add(first + second, IDENTIFIER)
        elif _is_identifier(token):
            add(token, IDENTIFIER)
            parts = _parts(token)
            if len(parts) > 1:
                for part in parts:
                    add(part, NUMBER if part.isdigit() and len(part) > 2 else PART)
        elif token.isdigit():
            add(token, NUMBER if len(token) > 2 else WORD)
        elif token.lower() not in _STOPWORDS:
            add(token, WORD)
    return terms


def document_terms(text: str) -> list[str]:
    """The distinct terms a message is indexed under (for ``array_to_tsvector``).

    At most ``MAX_DOCUMENT_TERMS`` terms and ``MAX_DOCUMENT_BYTES`` of them in UTF-8, the first
    ones of the text: a ``tsvector`` over 1 MB is an error, and a message that long is pasted
    material whose opening is what a query names.
    """
    out: list[str] = []
    size = 0
    for term in weighted_terms(text):
        size += len(term.encode("utf-8")) + 8  # the lexeme and its entry
        if len(out) == MAX_DOCUMENT_TERMS or size > MAX_DOCUMENT_BYTES:
            break
        out.append(term)
    return out


def query_terms(text: str) -> list[tuple[str, float]]:
    """The query's terms and weights, heaviest first (at most ``MAX_QUERY_TERMS``)."""
    ranked = sorted(weighted_terms(text).items(), key=lambda item: -item[1])
    return ranked[:MAX_QUERY_TERMS]


def seed_terms(terms: list[tuple[str, float]]) -> list[str]:
    """The terms that pick the candidates: all but single characters when others exist.

    A lone CJK character or the ``k`` of ``AX-55812-K`` occurs in a large part of any history;
    letting it pick candidates would score most of the scope for a term that cannot decide the
    ranking. The candidates found by the others are still scored on every term.
    """
    seeds = [term for term, _weight in terms if len(term) > 1]
    return seeds or [term for term, _weight in terms]


def tsquery_literal(terms: list[str]) -> str:
    """A ``tsquery`` matching any of ``terms``, each quoted verbatim (no parsing, no stemming)."""
    quoted = ("'" + term.replace("\\", "\\\\").replace("'", "''") + "'" for term in terms)
    return " | ".join(quoted)


#: BM25's saturation and length normalisation (every matched term counts once per message).
K1 = 1.2
B = 0.75


#: A seed term held by more rows than this is "common" (``the``-like words of a long
#: history): it picks candidates only to fill up (``common_sql``). SQLite's value.
COMMON_ROWS = 2000
#: The fill-up ranks at most this many of the newest common-term matches in scope.
WINDOW = 2000


def document_counts_sql(table: str, filters: str, terms: int, common: int = COMMON_ROWS) -> str:
    """How many rows in scope (``filters``) hold each of ``%(cN)s``, counted up to
    ``common + 1`` (one row; each count stops early, so a word in every message costs
    ``common`` matches, and a narrow scope costs its own rows at most)."""
    counts = ", ".join(
        f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {filters} AND"
        f" lex @@ %(c{i})s::tsquery LIMIT {int(common) + 1}) AS c{i})"
        for i in range(terms)
    )
    return f"SELECT {counts}"


def lexical_sql(table: str, filters: str, terms: int, *, window: bool = False) -> str:
    """The lexical search over ``table`` within ``filters`` (the scope), best ``%(k)s`` first.

    The candidates are the rows in scope that hold a seed term (``%(seeds)s``, GIN on ``lex``
    or the scope's own index, as the planner finds cheaper); the scope is in the same ``WHERE``,
    so no out-of-scope row takes a place. A candidate scores, for each query term ``%(tN)s`` it
    holds, the term's weight ``%(wN)s`` times its BM25 rarity among the candidates, normalised
    by the message's length in terms against the candidates' mean. Only the candidates' ids,
    times and term flags are kept while ranking; the ``k`` winners' rows are read at the end.

    With ``window`` (the fill-up by common terms), the candidates are only the newest
    ``%(window)s`` matches in scope, less the ids ``%(skip)s`` already found.
    """
    ids = range(terms)
    flags = ", ".join(f"(lex @@ %(t{i})s::tsquery)::int AS h{i}" for i in ids)
    counts = ", ".join(f"sum(h{i})::float8 AS d{i}" for i in ids)
    bound = (
        " AND message_id <> ALL(%(skip)s) ORDER BY ts DESC, message_id LIMIT %(window)s"
        if window
        else ""
    )
    weighed = " + ".join(
        f"f.h{i} * %(w{i})s::float8 * ln(1 + (st.n - st.d{i} + 0.5) / (st.d{i} + 0.5))" for i in ids
    )
    return (
        "WITH found AS MATERIALIZED ("
        f" SELECT message_id, ts, length(lex)::float8 AS len, {flags}"
        f" FROM {table} WHERE {filters} AND lex @@ %(seeds)s::tsquery{bound}),"
        f" st AS (SELECT count(*)::float8 AS n, greatest(avg(len), 1) AS avglen, {counts}"
        " FROM found),"
        f" top AS (SELECT f.message_id, f.ts, ({weighed})"
        f" * {K1 + 1} / (1 + {K1} * ({1 - B} + {B} * f.len / st.avglen)) AS score"
        " FROM found f CROSS JOIN st ORDER BY score DESC, f.ts DESC, f.message_id"
        " LIMIT %(k)s)"
        " SELECT v.session_id, v.ts, v.role, v.text, v.platform, v.user_id, top.score,"
        f" v.message_id FROM top JOIN {table} v USING (message_id)"
        " ORDER BY top.score DESC, top.ts DESC, top.message_id"
    )


__all__ = [
    "COMMON_ROWS",
    "MAX_QUERY_TERMS",
    "TERMS_VERSION",
    "WINDOW",
    "document_counts_sql",
    "document_terms",
    "lexical_sql",
    "query_terms",
    "seed_terms",
    "tsquery_literal",
    "weighted_terms",
]
