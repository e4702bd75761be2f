"""An online, consistent copy of the database file (``aalis backup``).

``VACUUM INTO`` reads the database inside one read transaction, so the copy is the state of
one instant even while other processes keep writing (in WAL mode a reader blocks no one),
and it writes a compact, complete file. Copying ``aalis.db`` with ``cp`` instead can miss
every transaction still in ``aalis.db-wal``, or catch the file half-written.

The copy is made under a temporary name beside the destination, switched to
``journal_mode=DELETE`` (a single self-contained file: restoring it never needs, and never
mixes with, a ``-wal``), checked with ``PRAGMA quick_check``, and only then renamed into
place, so a failed backup never leaves a half file under the name asked for.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

import attrs


@attrs.frozen
class BackupResult:
    """What a backup wrote."""

    path: Path
    bytes: int
    #: messages in the copy (archived included), read back from it
    messages: int


def backup_database(source: Path, destination: Path, *, busy_timeout_ms: int) -> BackupResult:
    """Copy ``source`` to ``destination`` consistently (blocking; run it off the loop)."""
    destination = Path(destination)
    if destination.resolve() == Path(source).resolve():
        raise ValueError(f"the backup must not overwrite the database itself ({source})")
    if destination.is_dir():
        raise IsADirectoryError(f"{destination} is a directory; name the backup file")
    directory = destination.resolve().parent
    fd, tmp_name = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    os.unlink(tmp_name)  # VACUUM INTO refuses an existing file
    tmp = Path(tmp_name)
    try:
        conn = sqlite3.connect(str(source), timeout=busy_timeout_ms / 1000, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            conn.execute("VACUUM INTO ?", (str(tmp),))
        finally:
            conn.close()
        copy = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            copy.execute("PRAGMA journal_mode = DELETE")
            check = copy.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"the copy failed its check: {check}")
            messages = int(copy.execute("SELECT count(*) FROM messages").fetchone()[0])
        finally:
            copy.close()
        os.chmod(tmp, 0o600)  # chat history is personal data, as the original
        os.replace(tmp, destination)
    except BaseException:
        for leftover in (tmp, Path(f"{tmp}-journal"), Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        raise
    return BackupResult(destination, destination.stat().st_size, messages)


__all__ = ["BackupResult", "backup_database"]
