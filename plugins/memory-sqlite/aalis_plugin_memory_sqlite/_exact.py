"""Exact archiving on SQLite: a snapshot with identities, and an archive that checks them.

Kept apart from ``engine.py`` on purpose: these functions take the engine's connection and
run on its worker thread like every engine method, but they are the one place that knows
how a message's identity is spelled.

An id is ``"<seq>:<crc32 of the stored JSON>"``. ``seq`` is the rowid, and SQLite may give
a deleted row's rowid to the next insert (the table has no AUTOINCREMENT, and adding it means
rebuilding the table); the checksum of the stored text makes such a reused rowid a different
id, and so does a rewrite of the message's content, which also invalidates a summary of it.

``archive_exact`` is one ``BEGIN IMMEDIATE`` transaction: the guard entry is compared, every
id is checked against the active rows, then the entry is written, the rows are archived and
the marker inserted. Another process that saves, archives, rewrites or clears either commits
before (and the check sees it) or waits for the write lock (and sees the result).
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Sequence

from aalis_api_memory import (
    ArchiveConflict,
    CheckedGuard,
    ExactCommit,
    HistorySnapshot,
    decode_metadata,
    same_entry,
)
from aalis_schema_message import Message

from aalis_core import gc_paused
from aalis_plugin_memory_sqlite._base import SqliteBase
from aalis_plugin_memory_sqlite._codec import Row, decode_messages_indexed, message_columns
from aalis_plugin_memory_sqlite._engine import id_conflict, is_id_conflict
from aalis_plugin_memory_sqlite._transaction import transaction

_SNAPSHOT = (
    "SELECT seq, data FROM messages WHERE session_id = ? AND archived = 0 ORDER BY timestamp, seq"
)
_IDS_TABLE = "aalis_exact_ids"
#: Rows a snapshot reads and decodes at a time.
SNAPSHOT_CHUNK = 512


def message_id(seq: int, data: str) -> str:
    return f"{seq}:{zlib.crc32(data.encode('utf-8'))}"


def _parse(ident: str) -> tuple[int, int] | None:
    seq, sep, crc = ident.partition(":")
    if not sep or not seq.isdigit() or not crc.isdigit():
        return None
    return int(seq), int(crc)


def history_snapshot(
    conn: sqlite3.Connection, session_id: str, report: Callable[[int, str], None]
) -> tuple[list[Message], list[str]]:
    """The active rows in order, decoded, each with its id (one statement: one snapshot).

    The rows are read and decoded ``SNAPSHOT_CHUNK`` at a time from the one statement (which
    keeps its read snapshot until it is exhausted): a row's text, the JSON joined for the
    parser and the parsed dicts then live only for one chunk, so a long session reuses a
    little warm memory instead of holding every row twice before the first message is built
    (that made a message cost twice as much at 100k messages as at 1k).
    """
    cursor = conn.execute(_SNAPSHOT, (session_id,))
    messages: list[Message] = []
    ids: list[str] = []
    base = 0

    def report_at(index: int, error: str) -> None:
        report(base + index, error)

    # One long-lived message object per row: without the pause, a long session triggers
    # full collections of the whole process while it is read (aalis_core._gc_pause).
    with gc_paused():
        while rows := cursor.fetchmany(SNAPSHOT_CHUNK):
            decoded = decode_messages_indexed([row[1] for row in rows], report_at)
            if len(decoded) == len(rows):
                messages.extend([message for _index, message in decoded])
                ids.extend([message_id(seq, data) for seq, data in rows])
            else:
                for index, message in decoded:
                    messages.append(message)
                    ids.append(message_id(rows[index][0], rows[index][1]))
            base += len(rows)
    return messages, ids


def archive_exact(
    conn: sqlite3.Connection,
    session_id: str,
    ids: Sequence[str],
    guard: CheckedGuard,
    marker: Row | None,
    now: int,
) -> int:
    """Check the guard and the ids, then write, archive and mark; all in one transaction."""
    parsed = [_parse(ident) for ident in ids]
    with transaction(conn):
        row = conn.execute(
            "SELECT data FROM metadata WHERE namespace = ? AND key = ?",
            (guard.namespace, guard.key),
        ).fetchone()
        stored = None if row is None else decode_metadata(row[0])
        if not same_entry(stored, guard.expected):
            raise ArchiveConflict("guard", "the guard entry changed since the snapshot")
        if any(item is None for item in parsed):
            raise ArchiveConflict("messages", "an id does not name a message of this store")
        wanted: dict[int, int] = {}
        for item in parsed:
            assert item is not None
            wanted[item[0]] = item[1]
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_IDS_TABLE} (seq INTEGER PRIMARY KEY)")
        conn.execute(f"DELETE FROM temp.{_IDS_TABLE}")
        conn.executemany(
            f"INSERT INTO temp.{_IDS_TABLE} (seq) VALUES (?)", [(seq,) for seq in wanted]
        )
        # Iterated, not fetched whole: each row's text is checked and dropped at once.
        found = conn.execute(
            f"SELECT m.seq, m.data, m.control FROM temp.{_IDS_TABLE} AS i"
            " JOIN messages AS m ON m.seq = i.seq"
            " WHERE m.session_id = ? AND m.archived = 0",
            (session_id,),
        )
        conversation = 0
        matched = 0
        for seq, data, control in found:
            if zlib.crc32(data.encode("utf-8")) == wanted[seq]:
                matched += 1
                conversation += 0 if control else 1
        if matched != len(wanted):
            raise ArchiveConflict("messages", "a message of the snapshot is no longer active")
        if wanted:
            conn.execute(
                f"UPDATE messages SET archived = 1 WHERE seq IN (SELECT seq FROM temp.{_IDS_TABLE})"
            )
            conn.execute(
                "UPDATE session_stats SET active = active - ?2, active_conv = active_conv - ?3,"
                " archived = archived + ?2 WHERE session_id = ?1",
                (session_id, len(wanted), conversation),
            )
        conn.execute(
            "INSERT INTO metadata (namespace, key, data, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data,"
            " updated_at = excluded.updated_at",
            (guard.namespace, guard.key, guard.text, now),
        )
        if marker is not None:
            timestamp, control, kind, role, platform, ident, data = marker
            conn.execute(
                "INSERT INTO messages (session_id, timestamp, archived, control, kind, role,"
                " platform, message_id, data) VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?)",
                (session_id, timestamp, control, kind, role, platform, ident, data),
            )
            conn.execute(
                "INSERT INTO session_stats (session_id, active, active_conv, archived, last_ts)"
                " VALUES (?1, 1, ?2, 0, ?3) ON CONFLICT (session_id) DO UPDATE SET"
                " active = active + 1, active_conv = active_conv + excluded.active_conv,"
                " last_ts = max(last_ts, excluded.last_ts)",
                (session_id, 1 - control, timestamp),
            )
        conn.execute(f"DELETE FROM temp.{_IDS_TABLE}")
    return len(wanted)


class SqliteExact(SqliteBase):
    """The ``ExactArchiving`` storage methods (a mixin of ``SqliteMemory``)."""

    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        report = self.engine.corrupt_reporter(session_id)
        messages, ids = await self._on_connection(history_snapshot, session_id, report)
        return HistorySnapshot(tuple(messages), tuple(ids))

    async def _archive_exact(self, session_id: str, commit: ExactCommit) -> int:
        marker = commit.marker
        row = None if marker is None else message_columns(marker.message, marker.timestamp)
        try:
            return await self._on_connection(
                archive_exact, session_id, commit.ids, commit.guard, row, commit.updated_at
            )
        except sqlite3.IntegrityError as exc:
            if is_id_conflict(exc):  # the marker named a stored id
                raise id_conflict(exc) from None
            raise


__all__ = ["SqliteExact", "archive_exact", "history_snapshot", "message_id"]
