"""Bulk deletes and rewrites that hold SQLite's write lock only for the writing itself.

The write lock is shared by every process on the file: whatever runs between
``BEGIN IMMEDIATE`` and ``COMMIT`` makes every other writer wait (and, past its busy timeout,
fail with "database is locked"). So:

- **delete by timestamps** loads the timestamps into a temporary table first (the temp
  database is private to the connection: filling it takes no lock on the file), then deletes
  with ONE set-based statement. Its plan probes the session index once per listed timestamp
  when the list is the smaller side, and walks the session's rows probing the temp table
  when the session is; either way the cost under the lock grows with
  ``min(list, session)`` and the rows deleted, never with two queries per timestamp.
- **rewrite** (``update_message_content``) reads and decodes the candidate rows, and
  encodes the changed ones, with no lock at all (``rewrite_plan``, run off the writer);
  under the lock it only applies ``UPDATE ... WHERE seq = ? AND data = <what was read>``. A
  row that another writer changed in between does not match, and only those few rows are
  redone under the lock, so nothing is lost and nothing is overwritten with stale text.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence

from aalis_schema_message import Message

from aalis_plugin_memory_sqlite._codec import (
    INT64_MAX,
    INT64_MIN,
    decode_messages_indexed,
    encode_message,
)
from aalis_plugin_memory_sqlite._transaction import transaction

_TS_TABLE = "aalis_delete_ts"
# The list is the smaller side: one index probe per listed timestamp, both archived ranges.
_DELETE_BY_PROBE = (
    "DELETE FROM messages WHERE session_id = ?1 AND archived IN (0, 1)"
    f" AND timestamp IN (SELECT ts FROM temp.{_TS_TABLE}) RETURNING archived, control"
)
# The session is the smaller side: walk its rows, probe the temp table (``+`` keeps the
# planner from using the timestamp column of the index).
_DELETE_BY_SCAN = (
    "DELETE FROM messages WHERE session_id = ?1"
    f" AND +timestamp IN (SELECT ts FROM temp.{_TS_TABLE}) RETURNING archived, control"
)

#: A rewrite: (new data, seq, data as read) for each row whose content changes.
Update = tuple[str, int, str]


def load_timestamps(conn: sqlite3.Connection, timestamps: Sequence[int]) -> int:
    """Fill the connection's temp table with the distinct storable timestamps; their count.

    Runs outside any transaction on the file: only the temp database is written.
    """
    # Deferred: touches temp only, so no lock on the database file.
    with transaction(conn, write=False):
        conn.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {_TS_TABLE} (ts INTEGER PRIMARY KEY) WITHOUT ROWID"
        )
        conn.execute(f"DELETE FROM temp.{_TS_TABLE}")
        conn.executemany(
            f"INSERT OR IGNORE INTO temp.{_TS_TABLE} (ts) VALUES (?)",
            [(ts,) for ts in timestamps if INT64_MIN <= ts <= INT64_MAX],
        )
        return int(conn.execute(f"SELECT count(*) FROM temp.{_TS_TABLE}").fetchone()[0])


def delete_loaded(
    conn: sqlite3.Connection, session_id: str, listed: int, session_rows: int
) -> tuple[int, int, int]:
    """Delete the session's rows whose timestamp is in the temp table (inside the caller's
    write transaction); returns (active, active conversation, archived) rows deleted."""
    sql = _DELETE_BY_PROBE if listed <= session_rows else _DELETE_BY_SCAN
    active = conversation = archived = 0
    for was_archived, control in conn.execute(sql, (session_id,)).fetchall():
        if was_archived:
            archived += 1
        else:
            active += 1
            conversation += 0 if control else 1
    return active, conversation, archived


def clear_timestamps(conn: sqlite3.Connection) -> None:
    """Empty the temp table (keeps a 600k-entry list from lingering in memory)."""
    with contextlib.suppress(sqlite3.Error):
        conn.execute(f"DELETE FROM temp.{_TS_TABLE}")


def rewrite_plan(
    rows: Sequence[tuple[int, int, str]],
    old: str,
    new: str,
    on_corrupt: Callable[[int, str], None],
) -> list[Update]:
    """The updates that replace ``old`` by ``new`` in string contents; no database access.

    ``rows`` are ``(timestamp, seq, data)`` as read. Decoding and encoding, the expensive
    part of a rewrite over a long session, happen here, before any lock is taken.
    """
    updates: list[Update] = []
    for index, message in decode_messages_indexed([row[2] for row in rows], on_corrupt):
        content = message.content
        if isinstance(content, str) and old in content:
            timestamp, seq, data = rows[index]
            updates.append((rewritten(message, timestamp, old, new), seq, data))
    return updates


def rewritten(message: Message, timestamp: int, old: str, new: str) -> str:
    """The stored text of ``message`` with ``old`` replaced by ``new`` in its content."""
    assert isinstance(message.content, str)
    changed = Message.from_json({**message.to_json(), "content": message.content.replace(old, new)})
    return encode_message(changed, timestamp)


def apply_rewrites(
    conn: sqlite3.Connection,
    updates: Sequence[Update],
    old: str,
    new: str,
    on_corrupt: Callable[[int, str], None],
) -> int:
    """Apply planned rewrites inside the caller's write transaction; rows changed.

    Each update only matches if the row still holds what was read. Rows changed by
    someone else meanwhile are re-read and redone here (there are few: they changed in a
    window of one decode); a row deleted meanwhile is simply gone.
    """
    if not updates:
        return 0
    cursor = conn.executemany(
        "UPDATE messages SET data = ?1 WHERE seq = ?2 AND data = ?3", list(updates)
    )
    changed = cursor.rowcount
    stale: list[int] = []
    if changed < len(updates):  # rare: find the rows someone else changed meanwhile
        for data, seq, _before in updates:
            row = conn.execute("SELECT data FROM messages WHERE seq = ?", (seq,)).fetchone()
            if row is not None and row[0] != data:
                stale.append(seq)
    for seq in stale:
        row = conn.execute("SELECT timestamp, data FROM messages WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            continue
        redo = rewrite_plan([(row[0], seq, row[1])], old, new, on_corrupt)
        if redo:
            conn.execute("UPDATE messages SET data = ? WHERE seq = ?", (redo[0][0], seq))
            changed += 1
    return changed


__all__ = [
    "Update",
    "apply_rewrites",
    "clear_timestamps",
    "delete_loaded",
    "load_timestamps",
    "rewrite_plan",
    "rewritten",
]
