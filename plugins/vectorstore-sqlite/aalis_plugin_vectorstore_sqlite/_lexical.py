"""The lexical leg in SQLite: an FTS5 table of each row's terms, ranked by BM25 and the
identifier tier (docs/recall.md, "Lexical leg").

Terms are computed in Python (``lexical_terms``: words, identifier parts, CJK bigrams in one
column; whole identifiers in another) and stored space-separated, so FTS5's ``unicode61``
tokenizer only has to split on spaces (``-``, ``_`` and ``.`` are token characters, which
keeps ``ax-55812-k`` one token). Measured against ``trigram`` (docs/recall.md, "Lexical
leg"): trigram cannot match a two-character name (王磊) or any token shorter than three
characters, matches ``parse_refund_window`` inside ``parse_refund_windows``, and was slower
and larger at 50k messages; bigrams plus identifier tokens find both.

``vectors_lex`` is keyed by the ``vectors`` row id and kept in step in the same transaction:
inserts by ``index_after`` right after the rows are written, deletes by a trigger on
``vectors`` (every path that removes a row: delete, rewrite, clear). ``drift`` and
``repair`` find and fix what still came apart (a file edited by hand or by another tool):
the ``aalis vector check`` of the lexical index. The scope filter is in
the same statement as the ``MATCH`` (a join on the row id), never applied afterwards.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from aalis_api_vectorstore import LexicalDrift, LexicalTerms, ScopeFilter, lexical_terms

from aalis_plugin_vectorstore_sqlite._scope import scope_clause

TABLE = "vectors_lex"
#: Columns are space-separated terms we computed; ``-_.`` stay inside identifier tokens.
TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '-_.'"
#: BM25 column weights: (words, identifiers) — a whole identifier counts twice.
WEIGHTS = (1.0, 2.0)
#: Bounds on one query's terms (a pasted page must not become a thousand-term MATCH).
MAX_WORDS = 64
MAX_IDENTIFIERS = 16
#: A term held by more rows than this is "common": it joins the match only to fill up
#: (see ``search``); and the fill-up ranks at most this many latest matches in scope.
COMMON_ROWS = 2000
WINDOW = 2000
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


def _drifted(
    conn: sqlite3.Connection, session_id: str | None
) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, str]]]:
    """The rows of ``session_id`` (every session when None) with no FTS row (missing) or
    with terms that are not their text's (stale): ``(row id, message id, text)`` each."""
    sql = (
        f"SELECT v.id, v.message_id, v.text, l.words, l.idents FROM vectors AS v "
        f"LEFT JOIN {TABLE} AS l ON l.rowid = v.id"
    )
    params: tuple[str, ...] = ()
    if session_id is not None:
        sql += " WHERE v.session_id = ?"
        params = (session_id,)
    missing: list[tuple[int, str, str]] = []
    stale: list[tuple[int, str, str]] = []
    cursor = conn.execute(sql, params)
    while chunk := cursor.fetchmany(_CHUNK):
        for row_id, message_id, text, words, idents in chunk:
            if words is None:
                missing.append((row_id, message_id, text))
            elif (words, idents) != _columns(lexical_terms(text)):
                stale.append((row_id, message_id, text))
    return missing, stale


_EXTRA = f"FROM {TABLE} WHERE rowid NOT IN (SELECT id FROM vectors)"


def drift(conn: sqlite3.Connection, session_id: str | None) -> LexicalDrift:
    """What ``vector check`` reports for the lexical index (``LexicalIndexCheck``): rows
    whose FTS row is missing or stale, and, store-wide, FTS rows of no row."""
    missing, stale = _drifted(conn, session_id)
    extra = (
        0
        if session_id is not None
        else int(conn.execute(f"SELECT count(*) {_EXTRA}").fetchone()[0])
    )
    return LexicalDrift(
        missing=[m for _, m, _ in missing], stale=[m for _, m, _ in stale], extra=extra
    )


def repair(conn: sqlite3.Connection, session_id: str | None) -> LexicalDrift:
    """Re-index the rows ``drift`` names from their stored text and, store-wide, drop the
    FTS rows of no row (inside the caller's write transaction); return what was fixed."""
    missing, stale = _drifted(conn, session_id)
    redo = missing + stale
    conn.executemany(f"DELETE FROM {TABLE} WHERE rowid = ?", ((r,) for r, _, _ in stale))
    index_rows(conn, ((row_id, text) for row_id, _, text in redo))
    extra = 0 if session_id is not None else int(conn.execute(f"DELETE {_EXTRA}").rowcount)
    return LexicalDrift(
        missing=[m for _, m, _ in missing], stale=[m for _, m, _ in stale], extra=extra
    )


def _phrase(term: str) -> str:
    # A quoted FTS5 string: the query's own quotes, stars and keywords stay data.
    return '"' + term.replace('"', '""') + '"'


def match_expression(words: Sequence[str], identifiers: Sequence[str]) -> str | None:
    """The ``MATCH`` of these terms (any word or any identifier), or None for none."""
    parts = []
    if words:
        parts.append("words : (" + " OR ".join(map(_phrase, words)) + ")")
    if identifiers:
        parts.append("idents : (" + " OR ".join(map(_phrase, identifiers)) + ")")
    return " OR ".join(parts) or None


def _document_counts(conn: sqlite3.Connection, column: str, terms: list[str]) -> dict[str, int]:
    """How many rows hold each term in ``column`` (FTS5's own statistics, no row read)."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{TABLE}_vocab "
        f"USING fts5vocab(main, {TABLE}, 'col')"
    )
    counts = dict.fromkeys(terms, 0)
    for term in terms:
        row = conn.execute(
            f"SELECT doc FROM temp.{TABLE}_vocab WHERE term = ? AND col = ?", (term, column)
        ).fetchone()
        if row is not None:
            counts[term] = int(row[0])
    return counts


def _ranked(
    conn: sqlite3.Connection,
    expression: str,
    identifiers: list[str],
    where: ScopeFilter,
    k: int,
    *,
    window: int | None = None,
    skip: Sequence[str] = (),
) -> list[Row]:
    """One statement: MATCH joined with the scope, by tier then BM25, ``LIMIT k``. With
    ``window``, only the latest ``window`` matches in scope are ranked (common terms)."""
    tier = " + ".join(f"(instr(' ' || {TABLE}.idents || ' ', ?) > 0)" for _ in identifiers)
    clause, scope_params = scope_clause(conn, where, table="v")
    if skip:
        clause += f" AND v.message_id NOT IN ({','.join('?' * len(skip))})"
        scope_params = [*scope_params, *skip]
    inner = (
        "SELECT v.message_id AS m, v.session_id AS session, v.timestamp AS ts, v.role AS role, "
        "v.text AS text, v.platform AS platform, v.user_id AS user, "
        f"-bm25({TABLE}, {WEIGHTS[0]}, {WEIGHTS[1]}) AS s, {tier or '0'} AS tier "
        f"FROM {TABLE} JOIN vectors AS v ON v.id = {TABLE}.rowid "
        f"WHERE {TABLE} MATCH ? AND {clause}"
    )
    params: list[object] = [f" {ident} " for ident in identifiers]
    params += [expression, *scope_params]
    if window is not None:
        inner += f" ORDER BY {TABLE}.rowid DESC LIMIT ?"
        params.append(window)
    sql = f"SELECT * FROM ({inner}) ORDER BY tier DESC, s DESC, ts DESC, m LIMIT ?"
    params.append(k)
    rows: list[Row] = []
    for m, session, ts, role, text, platform, user, s, tier_count in conn.execute(sql, params):
        bm25 = max(float(s), 1e-9)
        rows.append(
            (m, session, int(ts), role, text, platform, user, tier_count + bm25 / (1.0 + bm25))
        )
    return rows


def search(conn: sqlite3.Connection, terms: LexicalTerms, k: int, where: ScopeFilter) -> list[Row]:
    """The ``k`` best rows in scope: more of the query's identifiers first, then BM25.

    Returns (message_id, session_id, timestamp, role, text, platform, user_id, score), with
    score = tier + s / (1 + s), s = -bm25 > 0: the same shape as the reference store's.

    BM25 costs FTS5 work for every matching row, so a term held by more than
    ``COMMON_ROWS`` rows (``the order`` in a long history) does not take part when the query
    has rarer ones: those are matched and ranked exactly, and only when they give fewer
    than ``k`` hits in scope do the common terms fill up the rest, ranked among their latest
    ``WINDOW`` matches in scope, below every hit of the rare terms. ``k`` hits in scope
    whenever ``k`` matching rows exist, either way.
    """
    words = list(dict.fromkeys(terms.words))[:MAX_WORDS]
    identifiers = list(dict.fromkeys(terms.identifiers))[:MAX_IDENTIFIERS]
    if not (words or identifiers) or k == 0 or where.is_empty:
        return []
    word_rows = _document_counts(conn, "words", words)
    ident_rows = _document_counts(conn, "idents", identifiers)
    rare_words = [w for w in words if 0 < word_rows[w] <= COMMON_ROWS]
    rare_identifiers = [i for i in identifiers if 0 < ident_rows[i] <= COMMON_ROWS]
    common_words = [w for w in words if word_rows[w] > COMMON_ROWS]
    common_identifiers = [i for i in identifiers if ident_rows[i] > COMMON_ROWS]
    rows: list[Row] = []
    rare = match_expression(rare_words, rare_identifiers)
    if rare is not None:
        rows = _ranked(conn, rare, identifiers, where, k)
    common = match_expression(common_words, common_identifiers)
    if len(rows) >= k or common is None:
        return rows
    more = _ranked(
        conn,
        common,
        identifiers,
        where,
        k - len(rows),
        window=max(WINDOW, k),
        skip=[row[0] for row in rows],
    )
    if not rows:
        return more
    # Below every rare-term hit, in the fill-up's own order, still > 0.
    floor = rows[-1][7]
    return rows + [
        (*row[:7], floor * (len(more) - i) / (len(more) + 1)) for i, row in enumerate(more)
    ]


__all__ = [
    "COMMON_ROWS",
    "TABLE",
    "TOKENIZE",
    "WINDOW",
    "create",
    "drift",
    "index_after",
    "index_rows",
    "match_expression",
    "rebuild",
    "repair",
    "search",
]
