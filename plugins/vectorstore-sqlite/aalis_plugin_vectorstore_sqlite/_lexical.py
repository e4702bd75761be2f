"""The lexical leg in SQLite: an FTS5 table of each row's terms, ranked by BM25 and the
identifier tier (docs/recall.md, "Lexical leg").

Terms are computed in Python (``lexical_terms``: words, identifier parts, CJK bigrams in one
column; whole identifiers in another) and stored space-separated, so FTS5's ``unicode61``
tokenizer only has to split on spaces (``-``, ``_`` and ``.`` are token characters, which
keeps ``ax-55812-k`` one token). Measured against ``trigram`` (docs/recall.md): trigram cannot
match a two-character name (王磊) or any two-character token at all, and its index is several
times larger; bigrams plus identifier tokens find both.

``vectors_lex`` is keyed by the ``vectors`` row id and kept in step in the same transaction:
inserts by ``index_after`` right after the rows are written, deletes by a trigger on
``vectors`` (every path that removes a row: delete, rewrite, clear). The scope filter is in
the same statement as the ``MATCH`` (a join on the row id), never applied afterwards.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from aalis_api_vectorstore import LexicalTerms, ScopeFilter, lexical_terms

from aalis_plugin_vectorstore_sqlite._scope import scope_clause

TABLE = "vectors_lex"
#: Columns are space-separated terms we computed; ``-_.`` stay inside identifier tokens.
TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '-_.'"
#: BM25 column weights: (words, identifiers) — a whole identifier counts twice.
WEIGHTS = (1.0, 2.0)
#: Bounds on one query's terms (a pasted page must not become a thousand-term MATCH).
MAX_WORDS = 64
MAX_IDENTIFIERS = 16
_CHUNK = 2048

Row = tuple[str, str, int, str, str, str | None, str | None, float]


def create(conn: sqlite3.Connection) -> None:
    """The FTS table and the trigger that removes a row's terms with the row."""
    conn.execute(f'CREATE VIRTUAL TABLE {TABLE} USING fts5(words, idents, tokenize="{TOKENIZE}")')
    conn.execute(
        f"""CREATE TRIGGER vectors_lex_deleted AFTER DELETE ON vectors BEGIN
               DELETE FROM {TABLE} WHERE rowid = OLD.id;
           END"""
    )


def _columns(terms: LexicalTerms) -> tuple[str, str]:
    return " ".join(terms.words), " ".join(terms.identifiers)


def index_rows(conn: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
    """Index ``(row id, text)`` pairs (inside the caller's write transaction)."""
    conn.executemany(
        f"INSERT INTO {TABLE} (rowid, words, idents) VALUES (?, ?, ?)",
        ((row_id, *_columns(lexical_terms(text))) for row_id, text in rows),
    )


def index_after(conn: sqlite3.Connection, max_id: int) -> None:
    """Index the rows written after ``max_id`` (an upsert's new rows)."""
    index_rows(conn, conn.execute("SELECT id, text FROM vectors WHERE id > ?", (max_id,)))


def rebuild(conn: sqlite3.Connection) -> int:
    """Index every stored row afresh (the migration of a file written before this leg)."""
    conn.execute(f"DELETE FROM {TABLE}")
    cursor = conn.execute("SELECT id, text FROM vectors ORDER BY id")
    count = 0
    while chunk := cursor.fetchmany(_CHUNK):
        index_rows(conn, chunk)
        count += len(chunk)
    return count


def _phrase(term: str) -> str:
    # A quoted FTS5 string: the query's own quotes, stars and keywords stay data.
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: LexicalTerms) -> str | None:
    """The ``MATCH`` of a query's terms (any word or any identifier), or None for none."""
    words = list(dict.fromkeys(terms.words))[:MAX_WORDS]
    identifiers = list(dict.fromkeys(terms.identifiers))[:MAX_IDENTIFIERS]
    parts = []
    if words:
        parts.append("words : (" + " OR ".join(map(_phrase, words)) + ")")
    if identifiers:
        parts.append("idents : (" + " OR ".join(map(_phrase, identifiers)) + ")")
    return " OR ".join(parts) or None


def search(conn: sqlite3.Connection, terms: LexicalTerms, k: int, where: ScopeFilter) -> list[Row]:
    """The ``k`` best rows in scope: more of the query's identifiers first, then BM25.

    Returns (message_id, session_id, timestamp, role, text, platform, user_id, score), with
    score = tier + s / (1 + s), s = -bm25 > 0: the same shape as the reference store's.
    """
    expression = match_expression(terms)
    if expression is None or k == 0 or where.is_empty:
        return []
    identifiers = list(dict.fromkeys(terms.identifiers))[:MAX_IDENTIFIERS]
    tier = " + ".join(f"(instr(' ' || {TABLE}.idents || ' ', ?) > 0)" for _ in identifiers)
    clause, scope_params = scope_clause(conn, where, table="v")
    sql = (
        "SELECT v.message_id, v.session_id, v.timestamp, v.role, v.text, v.platform, "
        f"v.user_id, -bm25({TABLE}, {WEIGHTS[0]}, {WEIGHTS[1]}) AS s, {tier or '0'} AS tier "
        f"FROM {TABLE} JOIN vectors AS v ON v.id = {TABLE}.rowid "
        f"WHERE {TABLE} MATCH ? AND {clause} "
        "ORDER BY tier DESC, s DESC, v.timestamp DESC, v.message_id LIMIT ?"
    )
    params: list[object] = [f" {ident} " for ident in identifiers]
    params += [expression, *scope_params, k]
    rows: list[Row] = []
    for m, session, ts, role, text, platform, user, s, tier_count in conn.execute(sql, params):
        bm25 = max(float(s), 1e-9)
        rows.append(
            (m, session, int(ts), role, text, platform, user, tier_count + bm25 / (1.0 + bm25))
        )
    return rows


__all__ = [
    "TABLE",
    "TOKENIZE",
    "create",
    "index_after",
    "index_rows",
    "match_expression",
    "rebuild",
    "search",
]
