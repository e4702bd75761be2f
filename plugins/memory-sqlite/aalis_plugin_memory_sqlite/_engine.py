"""The synchronous storage work, run on the store's worker thread with its own connection.

Every method here receives arguments the async job modules (``history.py``, ...) have validated
and encoded, so nothing in this module judges caller input; it only turns it into SQL.
Hot paths use raw ``sqlite3`` with fixed SQL text, which the connection keeps as prepared
statements (``cached_statements``); sqlite-utils is used for the schema (``schema.py``).

Order everywhere is ``(timestamp, seq)``: ``seq`` is the rowid, assigned in insertion order.
The session index ``(session_id, archived, timestamp, seq, control)`` keeps a session's
active rows in one contiguous, ordered range; reads that need archived and active rows
together (full history, range, delete by timestamp) read both ranges with the same limit
and merge them, so no query sorts a whole session.

Write transactions start with ``BEGIN IMMEDIATE`` so the write lock is taken (and waited
for, under ``busy_timeout``) before anything is read; every transaction goes through
``transaction.py``.

The messages' jobs are here; the metadata statements are functions of an ``Engine`` in
``metadata.py``, exact archiving and leases functions of its connection in ``exact.py`` and
``leases.py``, all run on the same threads.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from aalis_api_memory import MessageIdConflict, SessionInfo, StoredRecord
from aalis_schema_message import Message

from aalis_plugin_memory_sqlite._bulk_writes import (
    Update,
    apply_rewrites,
    clear_timestamps,
    delete_loaded,
    load_timestamps,
    rewrite_plan,
)
from aalis_plugin_memory_sqlite._codec import (
    INT64_MAX,
    INT64_MIN,
    Row,
    decode_messages,
    decode_messages_indexed,
)
from aalis_plugin_memory_sqlite._transaction import rollback, transaction

Limit = int | float

_INSERT = (
    "INSERT INTO messages"
    " (session_id, timestamp, archived, control, kind, role, platform, message_id, data)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_STATS_ADD = (
    "INSERT INTO session_stats (session_id, active, active_conv, archived, last_ts) "
    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (session_id) DO UPDATE SET "
    "active = active + excluded.active, active_conv = active_conv + excluded.active_conv, "
    "archived = archived + excluded.archived, last_ts = max(last_ts, excluded.last_ts)"
)
# The single-save variant: a new row is always active, so fewer parameters to bind.
_STATS_ADD_ONE = (
    "INSERT INTO session_stats (session_id, active, active_conv, archived, last_ts) "
    "VALUES (?1, 1, ?2, 0, ?3) ON CONFLICT (session_id) DO UPDATE SET "
    "active = active + 1, active_conv = active_conv + excluded.active_conv, "
    "last_ts = max(last_ts, excluded.last_ts)"
)
# get_history in one statement: the boundary is the (limit+1)-th newest active conversation
# row, found on the covering index (OFFSET walks exactly the rows that will be returned);
# the result is every active row after it. Without a boundary the sentinel takes them all.
_HISTORY = (
    "WITH boundary (ts, sq) AS ("
    " SELECT timestamp, seq FROM messages"
    " WHERE session_id = ?1 AND archived = 0 AND control = 0"
    " ORDER BY timestamp DESC, seq DESC LIMIT 1 OFFSET ?2)"
    " SELECT data FROM messages"
    " WHERE session_id = ?1 AND archived = 0 AND (timestamp, seq) > ("
    f" SELECT coalesce((SELECT ts FROM boundary), {INT64_MIN}),"
    " coalesce((SELECT sq FROM boundary), -1))"
    " ORDER BY timestamp, seq"
)
_HISTORY_ALL = (
    "SELECT data FROM messages WHERE session_id = ? AND archived = 0 ORDER BY timestamp, seq"
)
_NEWEST = (
    "SELECT timestamp, seq, data FROM messages WHERE session_id = ? AND archived = ?"
    " ORDER BY timestamp DESC, seq DESC LIMIT ?"
)
_ALL_ROWS = "SELECT timestamp, seq, archived, data FROM messages WHERE session_id = ? ORDER BY timestamp, seq"
_ACTIVE_SPAN = (
    "SELECT seq, control FROM messages WHERE session_id = ? AND archived = 0"
    " ORDER BY timestamp, seq LIMIT ?"
)
_LAST_TS = "SELECT max(timestamp) FROM messages WHERE session_id = ? AND archived = ?"


def _everything(limit: Limit) -> bool:
    """``inf``, or a count no table can reach (and SQLite could not bind)."""
    return limit == math.inf or limit > INT64_MAX


def _sql_limit(limit: Limit) -> int:
    """SQLite's "no limit" is -1."""
    return -1 if _everything(limit) else int(limit)


def _marks(count: int) -> str:
    return ",".join("?" * count)


#: Longer filter lists go through a temporary table: SQLite caps bound parameters (32,766),
#: and ``json_each`` would not carry a NUL character through.
INLINE_VALUES = 200


def _clamp(ts: int) -> int:
    return max(INT64_MIN, min(INT64_MAX, ts))


def is_id_conflict(exc: sqlite3.IntegrityError) -> bool:
    """The unique index on ``message_id`` refused the write (and not another constraint)."""
    return "messages.message_id" in str(exc)


def id_conflict(exc: sqlite3.IntegrityError) -> MessageIdConflict:
    """The contract's error for the unique index on ``message_id`` (the write was undone)."""
    return MessageIdConflict(
        "a message id is already stored (ids are unique in the whole store); nothing was written"
    )


class Engine:
    """Storage operations on one connection; not thread-safe, used by one worker thread."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        range_query_limit: int,
        cross_session_max_limit: int,
        warn: Callable[..., Any],
    ) -> None:
        self.conn = conn
        self.range_query_limit = range_query_limit
        self.cross_session_max_limit = cross_session_max_limit
        self.warn = warn

    # -- internals ---------------------------------------------------------------------

    def _corrupt(self, session_id: str) -> Callable[[int, str], None]:
        def report(index: int, error: str) -> None:
            self.warn(
                "skipped an unreadable message row",
                session_id=session_id,
                position=index,
                error=error,
            )

        return report

    def corrupt_reporter(self, session_id: str) -> Callable[[int, str], None]:
        """The warning callback for unreadable rows (safe to call from any thread)."""
        return self._corrupt(session_id)

    def close(self) -> None:
        rollback(self.conn)
        self.conn.close()

    def _member(
        self,
        column: str,
        values: tuple[str, ...],
        params: list[Any],
        name: str,
        *,
        negate: bool = False,
    ) -> str:
        """SQL for ``column [NOT] IN values``, appending what it binds to ``params``."""
        operator = "NOT IN" if negate else "IN"
        if len(values) <= INLINE_VALUES:
            params.extend(values)
            return f"{column} {operator} ({_marks(len(values))})"
        table = f"aalis_filter_{name}"
        conn = self.conn
        # One savepoint: tens of thousands of single-row transactions would take seconds.
        conn.execute("SAVEPOINT aalis_filter")
        try:
            conn.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS {table} (v TEXT PRIMARY KEY) WITHOUT ROWID"
            )
            conn.execute(f"DELETE FROM temp.{table}")
            conn.executemany(
                f"INSERT OR IGNORE INTO temp.{table} (v) VALUES (?)", [(v,) for v in values]
            )
        except BaseException:
            conn.execute("ROLLBACK TO aalis_filter")
            raise
        finally:
            conn.execute("RELEASE aalis_filter")
        return f"{column} {operator} (SELECT v FROM temp.{table})"

    # -- messages ----------------------------------------------------------------------

    def save_message(self, session_id: str, row: Row) -> None:
        conn = self.conn
        timestamp, control, kind, role, platform, ident, data = row
        try:
            with transaction(conn):
                conn.execute(
                    _INSERT, (session_id, timestamp, 0, control, kind, role, platform, ident, data)
                )
                conn.execute(_STATS_ADD_ONE, (session_id, 1 - control, timestamp))
        except sqlite3.IntegrityError as exc:
            if is_id_conflict(exc):
                raise id_conflict(exc) from None
            raise

    def save_messages(self, items: Sequence[tuple[str, Row]]) -> list[None]:
        """Many saves in one transaction (group commit, see ``worker.py``), in order.

        A duplicate id fails the whole group, which the worker then retries one save at a
        time, so only the save that named a stored id gets ``MessageIdConflict``.
        """
        conn = self.conn
        totals: dict[str, list[int]] = {}
        params = []
        for session_id, (timestamp, control, kind, role, platform, ident, data) in items:
            params.append((session_id, timestamp, 0, control, kind, role, platform, ident, data))
            total = totals.get(session_id)
            if total is None:
                totals[session_id] = [1, 1 - control, timestamp]
            else:
                total[0] += 1
                total[1] += 1 - control
                total[2] = max(total[2], timestamp)
        with transaction(conn):
            conn.executemany(_INSERT, params)
            conn.executemany(
                _STATS_ADD,
                [(sid, active, conv, 0, last) for sid, (active, conv, last) in totals.items()],
            )
        return [None] * len(items)

    def history_texts(self, session_id: str, limit: Limit) -> list[str]:
        if _everything(limit):
            rows = self.conn.execute(_HISTORY_ALL, (session_id,)).fetchall()
        else:
            rows = self.conn.execute(_HISTORY, (session_id, int(limit))).fetchall()
        return [row[0] for row in rows]

    def get_history(self, session_id: str, limit: Limit) -> list[Message]:
        return decode_messages(self.history_texts(session_id, limit), self._corrupt(session_id))

    def count_history(self, session_id: str) -> int:
        row = self.conn.execute(
            "SELECT active_conv FROM session_stats WHERE session_id = ?", (session_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def _newest_rows(self, session_id: str, limit: Limit) -> list[tuple[int, int, str]]:
        """The newest ``limit`` rows of the session, archived or not, ascending."""
        if _everything(limit):
            return [
                (ts, seq, data)
                for ts, seq, _archived, data in self.conn.execute(_ALL_ROWS, (session_id,))
            ]
        count = int(limit)
        rows: list[tuple[int, int, str]] = []
        for archived in (0, 1):
            rows.extend(self.conn.execute(_NEWEST, (session_id, archived, count)))
        rows.sort()
        return rows[-count:] if count else []

    def get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        with transaction(self.conn, write=False):
            rows = self._newest_rows(session_id, limit)
        return decode_messages([row[2] for row in rows], self._corrupt(session_id))

    def archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        conn = self.conn
        with transaction(conn):
            span = conn.execute(_ACTIVE_SPAN, (session_id, _sql_limit(count))).fetchall()
            targets = [(seq,) for position, (seq, _c) in enumerate(span) if position not in keep]
            if targets:
                conversation = sum(
                    1
                    for position, (_s, control) in enumerate(span)
                    if position not in keep and not control
                )
                conn.executemany("UPDATE messages SET archived = 1 WHERE seq = ?", targets)
                conn.execute(
                    "UPDATE session_stats SET active = active - ?2, active_conv = active_conv - ?3,"
                    " archived = archived + ?2 WHERE session_id = ?1",
                    (session_id, len(targets), conversation),
                )
        return len(targets)

    def clear_session(self, session_id: str) -> None:
        conn = self.conn
        with transaction(conn):
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM session_stats WHERE session_id = ?", (session_id,))

    def clear_all(self) -> None:
        conn = self.conn
        with transaction(conn):
            conn.execute("DELETE FROM messages")
            conn.execute("DELETE FROM session_stats")

    def get_messages_by_session_range(
        self,
        session_id: str,
        from_ts: int,
        to_ts: int,
        roles: tuple[str, ...] | None,
        exclude_kinds: tuple[str, ...] | None,
    ) -> list[Message]:
        if from_ts > to_ts or from_ts > INT64_MAX or to_ts < INT64_MIN:
            return []
        sql = ["SELECT timestamp, seq, data FROM messages WHERE session_id = ? AND archived = ?"]
        sql.append("AND timestamp >= ? AND timestamp <= ?")
        filters: list[Any] = []
        if roles:
            sql.append("AND " + self._member("role", roles, filters, "roles"))
        if exclude_kinds:
            excluded = self._member("kind", exclude_kinds, filters, "exclude_kinds", negate=True)
            sql.append(f"AND (kind IS NULL OR {excluded})")
        sql.append("ORDER BY timestamp, seq LIMIT ?")
        text = " ".join(sql)
        limit = self.range_query_limit
        rows: list[tuple[int, int, str]] = []
        with transaction(self.conn, write=False):
            for archived in (0, 1):
                params = [session_id, archived, _clamp(from_ts), _clamp(to_ts), *filters, limit]
                rows.extend(self.conn.execute(text, params))
        rows.sort()
        return decode_messages([row[2] for row in rows[:limit]], self._corrupt(session_id))

    def get_recent_messages_across_sessions(
        self,
        limit: int,
        roles: tuple[str, ...],
        kinds: tuple[str, ...] | None,
        exclude_kinds: tuple[str, ...] | None,
        since_ts: int | None,
        platform: str | None,
        exclude_session_ids: tuple[str, ...] | None,
    ) -> list[tuple[str, Message]]:
        if since_ts is not None and since_ts > INT64_MAX:
            return []
        if kinds is not None and not kinds:
            return []  # an empty whitelist admits nothing
        params: list[Any] = []
        sql = [
            "SELECT session_id, data FROM messages WHERE archived = 0 AND "
            + self._member("role", roles, params, "roles")
        ]
        if kinds is not None:
            sql.append("AND " + self._member("kind", kinds, params, "kinds"))
        if exclude_kinds:
            excluded = self._member("kind", exclude_kinds, params, "exclude_kinds", negate=True)
            sql.append(f"AND (kind IS NULL OR {excluded})")
        if since_ts is not None:
            sql.append("AND timestamp >= ?")
            params.append(_clamp(since_ts))
        if platform is not None:
            sql.append("AND platform = ?")
            params.append(platform)
        if exclude_session_ids:
            skipped = self._member(
                "session_id", exclude_session_ids, params, "sessions", negate=True
            )
            sql.append("AND " + skipped)
        sql.append("ORDER BY timestamp DESC, seq DESC LIMIT ?")
        params.append(limit)
        rows = self.conn.execute(" ".join(sql), params).fetchall()
        rows.reverse()
        decoded = decode_messages_indexed([row[1] for row in rows], self._corrupt("*"))
        return [(rows[index][0], message) for index, message in decoded]

    def update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        """All three steps of a rewrite on this connection (the store splits them up)."""
        rows = self.rewrite_candidates(session_id, recent_limit)
        updates = rewrite_plan(rows, old, new, self._corrupt(session_id))
        return self.apply_rewrites(session_id, updates, old, new)

    def rewrite_candidates(
        self, session_id: str, recent_limit: Limit
    ) -> list[tuple[int, int, str]]:
        """The rows a rewrite looks at, read in one snapshot without the write lock."""
        with transaction(self.conn, write=False):
            return self._newest_rows(session_id, recent_limit)

    def apply_rewrites(self, session_id: str, updates: Sequence[Update], old: str, new: str) -> int:
        """Apply a planned rewrite (``bulk_writes.rewrite_plan``) in one write transaction."""
        if not updates:
            return 0
        conn = self.conn
        with transaction(conn):
            return apply_rewrites(conn, updates, old, new, self._corrupt(session_id))

    def delete_messages_by_timestamps(self, session_id: str, timestamps: Sequence[int]) -> int:
        """One set-based DELETE under the write lock (see ``bulk_writes``)."""
        conn = self.conn
        listed = load_timestamps(conn, timestamps)  # no lock on the file yet
        if not listed:
            return 0
        try:
            with transaction(conn):
                row = conn.execute(
                    "SELECT active + archived FROM session_stats WHERE session_id = ?",
                    (session_id,),
                ).fetchone()
                session_rows = int(row[0]) if row else 0
                active = conversation = archived_count = 0
                if session_rows:
                    active, conversation, archived_count = delete_loaded(
                        conn, session_id, listed, session_rows
                    )
                if active + archived_count:
                    self._refresh_stats(session_id, active, conversation, archived_count)
        finally:
            clear_timestamps(conn)
        return active + archived_count

    def _refresh_stats(
        self, session_id: str, active: int, conversation: int, archived: int
    ) -> None:
        """Subtract deleted rows from the session's counters; drop the row when it is empty."""
        conn = self.conn
        last = [conn.execute(_LAST_TS, (session_id, flag)).fetchone()[0] for flag in (0, 1)]
        present = [ts for ts in last if ts is not None]
        if not present:
            conn.execute("DELETE FROM session_stats WHERE session_id = ?", (session_id,))
            return
        conn.execute(
            "UPDATE session_stats SET active = active - ?2, active_conv = active_conv - ?3,"
            " archived = archived - ?4, last_ts = ?5 WHERE session_id = ?1",
            (session_id, active, conversation, archived, max(present)),
        )

    def list_sessions(self) -> list[SessionInfo]:
        rows = self.conn.execute(
            "SELECT session_id, active, archived, last_ts FROM session_stats"
            " ORDER BY last_ts DESC, session_id"
        ).fetchall()
        return [
            SessionInfo(session_id=sid, active=active, archived=archived, last_timestamp=last)
            for sid, active, archived, last in rows
        ]

    def export_session(self, session_id: str) -> list[tuple[Message, bool]]:
        rows = self.conn.execute(_ALL_ROWS, (session_id,)).fetchall()
        decoded = decode_messages_indexed([row[3] for row in rows], self._corrupt(session_id))
        return [(message, bool(rows[index][2])) for index, message in decoded]

    def import_messages(self, session_id: str, rows: Sequence[tuple[bool, Row]]) -> int:
        if not rows:
            return 0
        conn = self.conn
        params = [
            (session_id, ts, 1 if archived else 0, control, kind, role, platform, ident, data)
            for archived, (ts, control, kind, role, platform, ident, data) in rows
        ]
        active = sum(1 for archived, _row in rows if not archived)
        conversation = sum(1 for archived, row in rows if not archived and not row[1])
        last = max(row[0] for _archived, row in rows)
        try:
            with transaction(conn):  # all or nothing: a stored or repeated id undoes it all
                conn.executemany(_INSERT, params)
                conn.execute(
                    _STATS_ADD, (session_id, active, conversation, len(rows) - active, last)
                )
        except sqlite3.IntegrityError as exc:
            if is_id_conflict(exc):
                raise id_conflict(exc) from None
            raise
        return len(rows)

    # -- identity ----------------------------------------------------------------------

    def get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        """The rows whose ``message_id`` is listed, any session, archived included.

        One lookup per id on the unique index; one read snapshot for the whole list.
        """
        params: list[Any] = []
        with transaction(self.conn, write=False):
            where = self._member("message_id", tuple(ids), params, "ids")
            rows = self.conn.execute(
                f"SELECT session_id, archived, data FROM messages WHERE {where}", params
            ).fetchall()
        decoded = decode_messages_indexed([row[2] for row in rows], self._corrupt("*"))
        return [
            StoredRecord(session_id=rows[i][0], message=message, archived=bool(rows[i][1]))
            for i, message in decoded
        ]

    def delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        """Delete the session's rows among ``ids`` and adjust its counters; one transaction."""
        conn = self.conn
        params: list[Any] = [session_id]
        # Built before the write lock: a long list fills a temp table, which locks nothing.
        where = self._member("message_id", tuple(ids), params, "ids")
        active = conversation = archived = 0
        with transaction(conn):
            for was_archived, control in conn.execute(
                f"DELETE FROM messages WHERE session_id = ? AND {where}"
                " RETURNING archived, control",
                params,
            ).fetchall():
                if was_archived:
                    archived += 1
                else:
                    active += 1
                    conversation += 0 if control else 1
            if active + archived:
                self._refresh_stats(session_id, active, conversation, archived)
        return active + archived


__all__ = ["Engine", "Row", "id_conflict", "is_id_conflict"]
