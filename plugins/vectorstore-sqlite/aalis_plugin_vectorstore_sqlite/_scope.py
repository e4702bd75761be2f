"""The scope filter as SQL: the ``WHERE`` clause both legs of a search put in their query.

One builder for the vector leg's candidate ids and the lexical leg's FTS join, so the two
cannot read a filter differently (docs/recall.md, "The vectorstore contract"). Long sets of
sessions or roles go through temp tables instead of thousands of bound parameters.
"""

from __future__ import annotations

import sqlite3

from aalis_api_vectorstore import ScopeFilter

#: Up to this many values are bound as ``IN (?, ...)``; longer lists go through a temp table.
MAX_INLINE = 500


def scope_clause(
    conn: sqlite3.Connection, where: ScopeFilter, table: str = "vectors"
) -> tuple[str, list[object]]:
    """``(sql, params)`` selecting the rows of ``table`` (the vectors table or its alias)
    that ``where`` admits; runs inside the caller's transaction (temp tables are per
    connection and refilled on every call)."""
    clauses = [f"{table}.model_id = ?"]
    params: list[object] = [where.model_id]
    temp_tables: list[str] = []

    def member(column: str, values: frozenset[str], negate: bool) -> None:
        ordered = sorted(values)
        op = "NOT IN" if negate else "IN"
        if len(ordered) <= MAX_INLINE:
            clauses.append(f"{table}.{column} {op} ({','.join('?' * len(ordered))})")
            params.extend(ordered)
            return
        name = f"scope_{len(temp_tables)}"
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} (v TEXT PRIMARY KEY)")
        conn.execute(f"DELETE FROM temp.{name}")
        conn.executemany(f"INSERT INTO temp.{name} (v) VALUES (?)", [(v,) for v in ordered])
        temp_tables.append(name)
        clauses.append(f"{table}.{column} {op} (SELECT v FROM temp.{name})")

    if where.session_ids is not None:
        member("session_id", where.session_ids, negate=False)
    if where.exclude_session_ids:
        member("session_id", where.exclude_session_ids, negate=True)
    if where.platform is not None:
        clauses.append(f"{table}.platform = ?")
        params.append(where.platform)
    if where.user_id is not None:
        clauses.append(f"{table}.user_id = ?")
        params.append(where.user_id)
    if where.roles is not None:
        member("role", where.roles, negate=False)
    return " AND ".join(clauses), params


__all__ = ["MAX_INLINE", "scope_clause"]
