"""The store's second connection, for reads only, on a thread of its own.

In WAL mode a reader never needs the write lock: it reads the last committed snapshot while
another connection (in this process or another) writes. With one connection on one thread,
every ``get_history`` would still queue behind whatever the writer thread is doing, including
a save waiting up to the busy timeout for another process's lock. A separate connection on a
separate thread lets reads of any session return at once while a write waits.

Reads see every write this store acknowledged: a write is answered after its ``COMMIT``,
and each read starts a new snapshot, which includes every commit made before it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect_reader(path: Path, *, busy_timeout_ms: int) -> sqlite3.Connection:
    """Open ``path`` for reading (the writer connection created and migrated it already).

    Not ``mode=ro``: a read-only connection cannot recover a hot WAL file after a crash, and
    temp tables (long filter lists) still need a writable temp store.
    """
    conn = sqlite3.connect(
        str(path),
        timeout=busy_timeout_ms / 1000,
        isolation_level=None,
        cached_statements=256,
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA temp_store = MEMORY")
    except BaseException:
        conn.close()
        raise
    return conn


__all__ = ["connect_reader"]
