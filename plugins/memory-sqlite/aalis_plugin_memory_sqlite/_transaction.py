"""The one way this backend opens, commits and rolls back a transaction.

Connections run with ``isolation_level=None`` (schema.py), so nothing begins a transaction
implicitly: every statement outside ``BEGIN`` is its own, and every multi-statement unit of
work goes through ``transaction``:

* ``transaction(conn)`` is ``BEGIN IMMEDIATE``: the write lock is taken (and waited for,
  under ``busy_timeout``) before anything is read, so a read-then-write never fails half-way
  on a lock another process took in between.
* ``transaction(conn, write=False)`` is a deferred ``BEGIN``: one snapshot for several reads,
  no lock on the database file (a temp table may still be written).

On success it commits; on any exception, including one raised by the ``COMMIT`` itself
(``SQLITE_BUSY``), it rolls back when a transaction is still open and re-raises, so the
connection is never left inside a transaction. A class rather than ``@contextmanager``: the
save path goes through it on every message, and a generator costs a few times more.
"""

from __future__ import annotations

import sqlite3
from types import TracebackType


class transaction:
    """Context manager: one transaction on ``conn``, committed or rolled back."""

    __slots__ = ("_begin", "_conn")

    def __init__(self, conn: sqlite3.Connection, *, write: bool = True) -> None:
        self._conn = conn
        self._begin = "BEGIN IMMEDIATE" if write else "BEGIN"

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute(self._begin)
        return self._conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        conn = self._conn
        if exc_type is None:
            try:
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
            return
        rollback(conn)


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if any (a failed statement may have ended it)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


__all__ = ["rollback", "transaction"]
