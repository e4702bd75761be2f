"""The vector file: opening it safely and migrating its schema forward.

Same rules as memory-sqlite's file (see docs/recall.md): migrations are applied in order
inside ONE ``BEGIN IMMEDIATE`` transaction, so two processes opening an old file at once
cannot both migrate it and a failure leaves the file as it was; ``PRAGMA user_version`` is
the number of applied migrations, so a current file opens without running any of them and a
file from a newer version of this plugin is refused instead of misread. Each applied
migration is also recorded by name in ``vector_migrations``.

Never edit a migration once released; append a new one to ``MIGRATIONS``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from aalis_api_vectorstore import VectorStoreUnavailable


def _m0001(conn: sqlite3.Connection) -> None:
    # One row per message vector. ``vector`` is little-endian float32, ``dim`` floats long.
    # The key is the message's identity in the message store.
    conn.execute(
        """CREATE TABLE vectors (
               id INTEGER PRIMARY KEY,
               session_id TEXT NOT NULL,
               timestamp INTEGER NOT NULL,
               role TEXT NOT NULL,
               model_id TEXT NOT NULL,
               platform TEXT,
               user_id TEXT,
               text TEXT NOT NULL,
               vector BLOB NOT NULL
           )"""
    )
    conn.execute("CREATE UNIQUE INDEX vectors_key ON vectors (session_id, timestamp, role)")
    # The scope filter's access paths: every search names a model, and then sessions, a
    # platform or a user.
    conn.execute("CREATE INDEX vectors_model_session ON vectors (model_id, session_id)")
    conn.execute("CREATE INDEX vectors_model_platform ON vectors (model_id, platform)")
    conn.execute("CREATE INDEX vectors_model_user ON vectors (model_id, user_id)")
    # Per model: its width, its row count, and a version that every write bumps, which is
    # how any process's in-RAM matrix learns that it is stale (also after another process
    # wrote).
    conn.execute(
        """CREATE TABLE models (
               model_id TEXT NOT NULL PRIMARY KEY,
               dim INTEGER NOT NULL,
               count INTEGER NOT NULL DEFAULT 0,
               version INTEGER NOT NULL DEFAULT 0
           ) WITHOUT ROWID"""
    )
    conn.execute(
        """CREATE TRIGGER vectors_inserted AFTER INSERT ON vectors BEGIN
               UPDATE models SET count = count + 1, version = version + 1
               WHERE model_id = NEW.model_id;
           END"""
    )
    conn.execute(
        """CREATE TRIGGER vectors_deleted AFTER DELETE ON vectors BEGIN
               UPDATE models SET count = count - 1, version = version + 1
               WHERE model_id = OLD.model_id;
           END"""
    )


def _m0002(conn: sqlite3.Connection) -> None:
    # Vectors are keyed on the message id from now on (two messages of one millisecond
    # are two vectors). Vectors written before have no id and cannot be matched to their
    # message for sure, so they are dropped; their sessions are remembered in
    # ``dropped_sessions`` until memory-vector has recorded them as index gaps, which
    # re-embeds them from the message store: nothing is lost silently (docs/recall.md).
    conn.execute("CREATE TABLE dropped_sessions (session_id TEXT NOT NULL PRIMARY KEY)")
    conn.execute("INSERT INTO dropped_sessions SELECT DISTINCT session_id FROM vectors")
    conn.execute("DROP TABLE vectors")
    conn.execute(
        """CREATE TABLE vectors (
               id INTEGER PRIMARY KEY,
               message_id TEXT NOT NULL,
               session_id TEXT NOT NULL,
               timestamp INTEGER NOT NULL,
               role TEXT NOT NULL,
               model_id TEXT NOT NULL,
               platform TEXT,
               user_id TEXT,
               text TEXT NOT NULL,
               vector BLOB NOT NULL
           )"""
    )
    conn.execute("CREATE UNIQUE INDEX vectors_message ON vectors (message_id)")
    conn.execute("CREATE INDEX vectors_session_time ON vectors (session_id, timestamp)")
    conn.execute("CREATE INDEX vectors_model_session ON vectors (model_id, session_id)")
    conn.execute("CREATE INDEX vectors_model_platform ON vectors (model_id, platform)")
    conn.execute("CREATE INDEX vectors_model_user ON vectors (model_id, user_id)")
    conn.execute("UPDATE models SET count = 0, version = version + 1")
    conn.execute(
        """CREATE TRIGGER vectors_inserted AFTER INSERT ON vectors BEGIN
               UPDATE models SET count = count + 1, version = version + 1
               WHERE model_id = NEW.model_id;
           END"""
    )
    conn.execute(
        """CREATE TRIGGER vectors_deleted AFTER DELETE ON vectors BEGIN
               UPDATE models SET count = count - 1, version = version + 1
               WHERE model_id = OLD.model_id;
           END"""
    )


def _m0003(conn: sqlite3.Connection) -> None:
    # The lexical leg: an FTS5 index of every row's terms, built here from the stored text
    # so an existing file answers lexical searches at once (docs/recall.md, "Lexical leg").
    from aalis_plugin_vectorstore_sqlite._lexical import create, rebuild

    create(conn)
    rebuild(conn)


#: (name, migration) in order; released names never change.
MIGRATIONS: tuple[tuple[str, Callable[[sqlite3.Connection], None]], ...] = (
    ("0001_vectors_and_models", _m0001),
    ("0002_message_ids", _m0002),
    ("0003_lexical_index", _m0003),
)
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(VectorStoreUnavailable):
    """The file was written by a newer version of this plugin; opening it could damage it."""


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply pending migrations up to ``target`` in one immediate transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS vector_migrations "
            "(name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
        )
        current = user_version(conn)
        for index in range(current, target):
            name, step = MIGRATIONS[index]
            step(conn)
            conn.execute(
                "INSERT INTO vector_migrations (name, applied_at) VALUES (?, ?)",
                (name, int(time.time() * 1000)),
            )
        if target > current:
            conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return user_version(conn)


def _make_private_path(path: Path) -> None:
    """Create missing folders (0o700) and the file (0o600): the texts are personal data."""
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
        os.chmod(folder, 0o700)
    if not path.exists():
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return
        os.close(fd)


def _retry_busy(action: str, fn: Callable[[], object], deadline: float) -> None:
    """Retry ``fn`` while SQLite reports a lock its busy handler does not wait for
    (switching a file to WAL while another process opens it fails at once)."""
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


def _enable_wal(conn: sqlite3.Connection) -> None:
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode=wal")


def connect(
    path: Path, *, synchronous: str = "NORMAL", busy_timeout_ms: int = 5000
) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the file; the calling thread owns the connection.

    Every failure to get a usable file — not a database, corrupt, locked past the busy
    timeout, read-only, newer schema — is a ``VectorStoreUnavailable`` naming the file and
    the cause, never a silent fresh file somewhere else.
    """
    if synchronous not in ("NORMAL", "FULL"):
        raise ValueError(f"synchronous must be NORMAL or FULL, got {synchronous!r}")
    path = Path(path)
    try:
        _make_private_path(path)
        conn = sqlite3.connect(
            str(path), timeout=busy_timeout_ms / 1000, isolation_level=None, cached_statements=64
        )
    except (OSError, sqlite3.Error) as exc:
        raise VectorStoreUnavailable(f"cannot open vector store {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        deadline = time.monotonic() + busy_timeout_ms / 1000
        found = user_version(conn)
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"{path} has vector schema version {found}, but this "
                f"aalis-plugin-vectorstore-sqlite knows only up to {SCHEMA_VERSION}; upgrade "
                "the plugin (the file was left untouched)"
            )
        _retry_busy("enabling WAL", lambda: _enable_wal(conn), deadline)
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA temp_store = MEMORY")
        if found < SCHEMA_VERSION:
            _retry_busy("migrating the schema", lambda: migrate(conn), deadline)
        # A file that is a database but not ours (or damaged tables) fails here, not later.
        conn.execute("SELECT model_id, dim, count, version FROM models LIMIT 1").fetchall()
        conn.execute("SELECT id FROM vectors LIMIT 1").fetchall()
        conn.execute("SELECT rowid FROM vectors_lex LIMIT 1").fetchall()
    except VectorStoreUnavailable:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        raise VectorStoreUnavailable(f"cannot use vector store {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SchemaTooNew", "connect", "migrate", "user_version"]
