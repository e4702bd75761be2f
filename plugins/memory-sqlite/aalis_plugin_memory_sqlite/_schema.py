"""The database file: opening it safely and migrating its schema forward.

Migrations are a ``sqlite_utils.Migrations`` set in ``migrations.py`` under the names listed
in ``versions.py`` (each one recorded by name in ``_sqlite_migrations``), applied in order
inside ONE ``BEGIN IMMEDIATE`` transaction: the write lock is taken before the pending list is read, so two processes opening an old file at
the same moment cannot both migrate it, and a failure leaves the file exactly as it was.
``PRAGMA user_version`` mirrors the number of applied migrations, which lets an open skip the
migration machinery entirely when the file is current and refuse a file written by a newer
version of this plugin instead of misreading it. sqlite-utils is only imported when a
migration is pending, so opening a current file (every ``aalis`` command) does not pay for it.

Never edit a migration once released; add a new one. Migration 1 is the first shape of the
tables and stays as it was, so a database made by that version is migrated, not recreated
(``tests/test_schema.py`` opens a file built with that DDL).
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from aalis_api_memory import SchemaTooNew

from aalis_plugin_memory_sqlite._versions import (
    MIGRATION_NAMES,
    MIGRATION_SET,
    SCHEMA_VERSION,
    user_version,
)


def _make_private_path(path: Path) -> list[Path]:
    """Create missing folders (0o700) and the file (0o600): chat history is personal data.

    Returns what it created (deepest last), so a failed first open can take it back.
    """
    created: list[Path] = []
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
        created.append(folder)
        os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
    if not path.exists():
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return created
        os.close(fd)
        created.append(path)
    return created


def _take_back(created: list[Path], path: Path) -> None:
    """Remove what a failed first open created (an empty file, its folders).

    A store that could not be created must leave nothing behind: an empty ``aalis.db``
    would make the next run look like a fresh, working store. Only a file that is still
    empty is removed (with an empty ``-wal``), so a second process that opened it in the
    meantime and wrote to it never loses that.
    """
    if path in created:
        wal = Path(f"{path}-wal")
        try:
            if path.stat().st_size > 0 or (wal.exists() and wal.stat().st_size > 0):
                return
        except OSError:
            return
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    for item in reversed(created):
        try:
            if item.is_dir():
                item.rmdir()
            else:
                item.unlink()
        except OSError:
            return


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


def _enable_wal(conn: sqlite3.Connection) -> None:
    # What sqlite-utils' Database.enable_wal does, without importing it on every open.
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode=wal")


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
    created = _make_private_path(path)
    try:
        conn = sqlite3.connect(
            str(path),
            timeout=busy_timeout_ms / 1000,
            isolation_level=None,
            cached_statements=256,
        )
    except BaseException:
        _take_back(created, path)
        raise
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
        _retry_busy("enabling WAL", lambda: _enable_wal(conn), deadline)
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA temp_store = MEMORY")  # long filter lists (engine._member)
        if found < SCHEMA_VERSION:
            from aalis_plugin_memory_sqlite._migrations import migrate

            _retry_busy("migrating the schema", lambda: migrate(conn), deadline)
    except BaseException:
        conn.close()
        _take_back(created, path)
        raise
    return conn


__all__ = [
    "MIGRATION_NAMES",
    "MIGRATION_SET",
    "SCHEMA_VERSION",
    "SchemaTooNew",
    "connect",
    "user_version",
]
