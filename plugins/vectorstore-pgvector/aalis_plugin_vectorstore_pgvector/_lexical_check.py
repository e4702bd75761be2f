"""The lexical index compared with the text it must follow, and repaired from it
(``LexicalIndexCheck``; ``aalis vector check``, docs/backends/postgres.md, "Lexical search").

The terms live in the row itself (``lex``, written in the same statement as the text), so
an entry of no row cannot exist; what can come apart is the column: emptied or left null by
a hand edit or another tool, or holding the terms of an older text, or of older term rules
(``TERMS_VERSION``) applied by a tool that skipped the migration. A row is *missing* when
``lex`` is null or empty while its text has terms, *stale* when its terms are not those of
its text; repairing writes ``document_terms(text)`` back.
"""

from __future__ import annotations

from typing import Any

from aalis_api_vectorstore import LexicalDrift
from psycopg import AsyncConnection

from aalis_plugin_vectorstore_pgvector._codec import escape, unescape
from aalis_plugin_vectorstore_pgvector._lexical import document_terms

_BATCH = 2000


async def _drifted(
    conn: AsyncConnection[Any], table: str, session_id: str | None
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """``(stored message id, wanted terms)`` of the missing and of the stale rows."""
    where, params = (
        ("", ()) if session_id is None else (" AND session_id = %s", (escape(session_id),))
    )
    missing: list[tuple[str, list[str]]] = []
    stale: list[tuple[str, list[str]]] = []
    last = ""
    while True:
        cursor = await conn.execute(
            f"SELECT message_id, text, tsvector_to_array(lex) FROM {table}"
            f" WHERE message_id > %s{where} ORDER BY message_id LIMIT {_BATCH}",
            (last, *params),
        )
        rows = await cursor.fetchall()
        if not rows:
            break
        for message_id, text, stored in rows:
            wanted = document_terms(unescape(text))
            if set(stored or ()) == set(wanted):
                continue
            (missing if wanted and not stored else stale).append((message_id, wanted))
        last = rows[-1][0]
    return missing, stale


def _drift(
    missing: list[tuple[str, list[str]]], stale: list[tuple[str, list[str]]]
) -> LexicalDrift:
    return LexicalDrift(
        missing=[unescape(m) for m, _ in missing], stale=[unescape(m) for m, _ in stale]
    )


async def check(conn: AsyncConnection[Any], table: str, session_id: str | None) -> LexicalDrift:
    """The rows of ``session_id`` (every session when None) whose ``lex`` is missing or stale."""
    return _drift(*await _drifted(conn, table, session_id))


async def repair(conn: AsyncConnection[Any], table: str, session_id: str | None) -> LexicalDrift:
    """Write the terms of their text back into the rows ``check`` names; what was fixed."""
    async with conn.transaction():
        missing, stale = await _drifted(conn, table, session_id)
        async with conn.cursor() as cursor:
            await cursor.executemany(
                f"UPDATE {table} SET lex = array_to_tsvector(%s::text[]) WHERE message_id = %s",
                [(terms, message_id) for message_id, terms in missing + stale],
            )
    return _drift(missing, stale)


__all__ = ["check", "repair"]
