"""The database file: opening it safely and migrating its schema forward.

Migrations are a ``sqlite_utils.Migrations`` set (each one recorded by name in
``_sqlite_migrations``), applied in order inside ONE ``BEGIN IMMEDIATE`` transaction: the
write lock is taken before the pending list is read, so two processes opening an old file at
the same moment cannot both migrate it, and a failure leaves the file exactly as it was.
``PRAGMA user_version`` mirrors the number of applied migrations, which lets an open skip the
migration machinery entirely when the file is current and refuse a file written by a newer
version of this plugin instead of misreading it.

Never edit a migration once released; add a new one. Migration 1 is the first shape of the
tables and stays as it was, so a database made by that version is migrated, not recreated
(``tests/test_schema.py`` opens a file built with that DDL).
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from aalis_schema_message import CONTROL_KINDS
from sqlite_utils import Database, Migrations

MIGRATION_SET = "aalis-memory-sqlite"

#: Migration names in order; released names never change.
MIGRATION_NAMES: tuple[str, ...] = (
    "0001_messages_and_metadata",
    "0002_counters_and_filter_columns",
)

#: Number of migrations this version knows; ``PRAGMA user_version`` of a current file.
SCHEMA_VERSION = len(MIGRATION_NAMES)

migrations = Migrations(MIGRATION_SET)


class SchemaTooNew(RuntimeError):
    """The file was written by a newer version of this plugin; opening it could damage it."""


@migrations(name=MIGRATION_NAMES[0])
def _m0001(db: Database) -> None:
    db.table("messages").create(
        {
            "seq": int,
            "session_id": str,
            "timestamp": int,
            "archived": int,
            "kind": str,
            "role": str,
            "data": str,
        },
        pk="seq",
        not_null={"session_id", "timestamp", "archived", "role", "data"},
        defaults={"archived": 0},
    )
    db.table("messages").create_index(
        ["session_id", "archived", "timestamp"], index_name="messages_session"
    )
    db.table("metadata").create(
        {"namespace": str, "key": str, "data": str, "updated_at": int},
        pk=("namespace", "key"),
        not_null={"namespace", "key", "data", "updated_at"},
    )


@migrations(name=MIGRATION_NAMES[1])
def _m0002(db: Database) -> None:
    messages = db.table("messages")
    # ``control`` makes "conversation message" an indexable column instead of a kind list
    # repeated in every query; ``platform`` lets the cross-session filter run in SQL.
    messages.add_column("control", int, not_null_default=0)
    messages.add_column("platform", str)
    kinds = sorted(CONTROL_KINDS)
    marks = ",".join("?" for _ in kinds)
    db.execute(f"UPDATE messages SET control = 1 WHERE kind IN ({marks})", kinds)
    db.execute(
        """UPDATE messages SET platform = json_extract(data, '$.metadata.platform')
           WHERE json_valid(data) AND json_type(data, '$.metadata.platform') = 'text'"""
    )
    # (session_id, archived, timestamp, seq, control): active rows of a session are one
    # contiguous range in (timestamp, seq) order, and ``control`` is covered so the
    # get_history boundary is found without touching the table.
    db.execute('DROP INDEX "messages_session"')
    db.table("messages").create_index(
        ["session_id", "archived", "timestamp", "seq", "control"], index_name="messages_session"
    )
    # Cross-session reads walk active rows newest first; partial indexes hold active rows only.
    db.execute('CREATE INDEX "messages_recent" ON "messages" ("timestamp") WHERE archived = 0')
    db.execute(
        'CREATE INDEX "messages_recent_platform" ON "messages" ("platform", "timestamp") '
        "WHERE archived = 0 AND platform IS NOT NULL"
    )
    # One row per session, updated in the same transaction as every message write, so
    # count_history and list_sessions never count rows. WITHOUT ROWID: one b-tree, one page
    # touched per save.
    db.execute(
        """CREATE TABLE "session_stats" (
               "session_id" TEXT NOT NULL PRIMARY KEY,
               "active" INTEGER NOT NULL,
               "active_conv" INTEGER NOT NULL,
               "archived" INTEGER NOT NULL,
               "last_ts" INTEGER NOT NULL
           ) WITHOUT ROWID"""
    )
    db.execute(
        """INSERT INTO session_stats (session_id, active, active_conv, archived, last_ts)
           SELECT session_id,
                  sum(archived = 0),
                  sum(archived = 0 AND control = 0),
                  sum(archived != 0),
                  max(timestamp)
           FROM messages GROUP BY session_id"""
    )


def _make_private_path(path: Path) -> None:
    """Create missing folders (0o700) and the file (0o600): chat history is personal data."""
    missing: list[Path] = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
    if not path.exists():
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return
        os.close(fd)


def _retry_busy(action: str, fn: object, deadline: float) -> None:
    """Run ``fn`` again while SQLite reports a lock that its busy handler does not wait for.

    Changing the journal mode of a file another process is opening can fail at once with
    "database is locked"; it is retried until ``deadline`` (the busy timeout).
    """
    assert callable(fn)
    while True:
        try:
            fn()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise sqlite3.OperationalError(f"{action}: {exc}") from exc
            time.sleep(0.005)


def user_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply pending migrations up to ``target`` in one immediate transaction.

    Returns the schema version afterwards. ``target`` below ``SCHEMA_VERSION`` exists for the
    tests that build an old file.
    """
    if user_version(conn) >= target:
        return user_version(conn)
    db = Database(conn, recursive_triggers=False, execute_plugins=False)
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = user_version(conn)
        if current < target:
            stop_before = MIGRATION_NAMES[target] if target < len(MIGRATION_NAMES) else None
            migrations.apply(db, stop_before=stop_before)
            conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return user_version(conn)


def connect(
    path: Path, *, synchronous: str = "NORMAL", busy_timeout_ms: int = 5000
) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database; the caller's thread owns it.

    ``isolation_level=None``: this module and the store issue ``BEGIN IMMEDIATE``/``COMMIT``
    themselves, so a write transaction takes the write lock up front and waits for it under
    ``busy_timeout`` (a deferred transaction that reads first cannot wait: SQLite fails it
    with "database is locked" when another process wrote in between).
    """
    if synchronous not in ("NORMAL", "FULL"):
        raise ValueError(f"synchronous must be NORMAL or FULL, got {synchronous!r}")
    path = Path(path)
    _make_private_path(path)
    conn = sqlite3.connect(
        str(path),
        timeout=busy_timeout_ms / 1000,
        isolation_level=None,
        cached_statements=256,
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        deadline = time.monotonic() + busy_timeout_ms / 1000
        # Check the version before anything writes (switching to WAL writes the header).
        found = user_version(conn)
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"{path} has schema version {found}, but this aalis-plugin-memory-sqlite knows "
                f"only up to {SCHEMA_VERSION}; upgrade the plugin (the file was left untouched)"
            )
        db = Database(conn, recursive_triggers=False, execute_plugins=False)
        _retry_busy("enabling WAL", db.enable_wal, deadline)
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA temp_store = MEMORY")  # long filter lists (engine._member)
        if found < SCHEMA_VERSION:
            _retry_busy("migrating the schema", lambda: migrate(conn), deadline)
    except BaseException:
        conn.close()
        raise
    return conn


__all__ = [
    "MIGRATION_NAMES",
    "MIGRATION_SET",
    "SCHEMA_VERSION",
    "SchemaTooNew",
    "connect",
    "migrate",
    "migrations",
    "user_version",
]
