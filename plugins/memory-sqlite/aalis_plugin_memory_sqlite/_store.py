"""``SqliteMemory``: the ``MemoryService`` of this backend, every optional method included.

The contract's methods come from ``CompleteMemoryBackend`` (aalis_api_memory._backend), which
validates and normalises every argument before anything is read or written, the same way on
every backend. The storage methods here encode on the caller's side (so the stored value is
the value at call time) and hand the storage work to the store's worker thread
(``worker.py``), which owns the connection. Reads go to a second connection on a second
thread (``reader.py``), so they never queue behind a write that is waiting for another
process's lock. Both threads are called with typed calls: ``self._read(Engine.get_history,
session_id, limit)`` is checked like ``engine.get_history(session_id, limit)``.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aalis_api_memory import StoreClosed

from aalis_plugin_memory_sqlite._backup import BackupResult, backup_database
from aalis_plugin_memory_sqlite._base import NOT_OPEN, SqliteBase, T
from aalis_plugin_memory_sqlite._config import SqliteConfig
from aalis_plugin_memory_sqlite._engine import Engine
from aalis_plugin_memory_sqlite._exact import SqliteExact
from aalis_plugin_memory_sqlite._history import SqliteHistory
from aalis_plugin_memory_sqlite._identity import SqliteIdentity
from aalis_plugin_memory_sqlite._leases import SqliteLeases
from aalis_plugin_memory_sqlite._metadata import SqliteMetadata
from aalis_plugin_memory_sqlite._queries import SqliteQueries
from aalis_plugin_memory_sqlite._reader import connect_reader
from aalis_plugin_memory_sqlite._schema import connect
from aalis_plugin_memory_sqlite._transfer import SqliteTransfer
from aalis_plugin_memory_sqlite._worker import Worker, WorkerClosed


def is_lock_timeout(exc: BaseException) -> bool:
    """SQLite gave up waiting for another connection's lock (the busy timeout ran out)."""
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _reader_engine(path: Path, config: SqliteConfig, warn: Callable[..., Any]) -> Engine:
    return Engine(
        connect_reader(path, busy_timeout_ms=config.busy_timeout_ms),
        range_query_limit=config.range_query_limit,
        cross_session_max_limit=config.cross_session_max_limit,
        warn=warn,
    )


class SqliteMemory(
    SqliteHistory,
    SqliteQueries,
    SqliteIdentity,
    SqliteTransfer,
    SqliteExact,
    SqliteMetadata,
    SqliteLeases,
    SqliteBase,
):
    """Per-session history and metadata in one SQLite file (WAL; several processes may share it).

    ``await store.open()`` (or ``async with SqliteMemory(path) as store``) creates or migrates
    the file; ``await store.close()`` releases it. Arguments are checked by
    ``CompleteMemoryBackend``; each group of storage methods is a mixin of its own module
    (``history.py``, ``queries.py``, ``identity.py``, ``transfer.py``, ``exact.py``,
    ``metadata.py``, ``leases.py``) over the threads of ``base.py``.
    """

    @classmethod
    def from_config(
        cls, config: SqliteConfig, data_dir: str | os.PathLike[str], logger: Any = None
    ) -> SqliteMemory:
        """The store a host would build: ``config.path`` taken relative to ``data_dir``."""
        path = Path(data_dir) / Path(config.path).expanduser()
        return cls(
            path,
            synchronous=config.synchronous,
            busy_timeout_ms=config.busy_timeout_ms,
            range_query_limit=config.range_query_limit,
            cross_session_max_limit=config.cross_session_max_limit,
            logger=logger,
        )

    def __repr__(self) -> str:
        state = "open" if self._engine is not None else "closed"
        return f"SqliteMemory({str(self.path)!r}, {state})"

    def _connect(self) -> Engine:
        conn = connect(
            self.path,
            synchronous=self.config.synchronous,
            busy_timeout_ms=self.config.busy_timeout_ms,
        )
        return Engine(
            conn,
            range_query_limit=self.config.range_query_limit,
            cross_session_max_limit=self.config.cross_session_max_limit,
            warn=self._logger.warning,
        )

    async def open(self) -> SqliteMemory:
        async with self._open_lock:  # two concurrent opens must not start two threads
            if self._engine is not None:
                return self
            worker = Worker(f"aalis-sqlite {self.path.name}", final_group_error=is_lock_timeout)
            reader = Worker(f"aalis-sqlite-read {self.path.name}")
            try:
                engine = await worker.call(self._connect)  # creates and migrates the file
                try:
                    # Not a bound method: the reader thread keeps its last job, and that
                    # must not keep this store alive (a dropped store stops its threads).
                    read_engine = await reader.call(
                        _reader_engine, self.path, self.config, self._logger.warning
                    )
                except BaseException:
                    await worker.call(engine.close)
                    raise
            except BaseException:
                worker.stop()
                reader.stop()
                raise
            # A store dropped without close() must not leave its threads behind.
            weakref.finalize(self, worker.stop)
            weakref.finalize(self, reader.stop)
            self._engine, self._worker = engine, worker
            self._read_engine, self._reader = read_engine, reader
        return self

    async def close(self) -> None:
        """Close the connection after every call already submitted; idempotent."""
        engine, worker = self._engine, self._worker
        read_engine, reader = self._read_engine, self._reader
        if engine is None or worker is None:
            return
        self._engine = self._worker = None
        self._read_engine = self._reader = None
        try:
            if read_engine is not None and reader is not None:
                try:
                    await reader.call(read_engine.close)
                except WorkerClosed:
                    pass
                finally:
                    reader.stop()
            await worker.call(engine.close)
        except WorkerClosed:
            pass
        finally:
            worker.stop()

    async def __aenter__(self) -> SqliteMemory:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def run_on_connection(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` on the worker thread, after every call submitted before.

        For diagnostics, tests and benchmarks (``PRAGMA`` checks, timing the synchronous
        engine); the connection must not escape ``fn``, it belongs to the worker thread.
        """
        engine, worker = self._writer()
        return await worker.call(fn, engine.conn)

    async def backup(self, destination: str | os.PathLike[str]) -> BackupResult:
        """Write a consistent copy of the whole database to ``destination`` (``aalis backup``).

        Online: other connections and processes keep reading and writing meanwhile.
        See ``backup.py`` and docs/backends/sqlite.md (backups and restores).
        """
        if self._engine is None:
            raise StoreClosed(NOT_OPEN)
        return await asyncio.to_thread(
            backup_database,
            self.path,
            Path(os.fspath(destination)),
            busy_timeout_ms=self.config.busy_timeout_ms,
        )


__all__ = ["SqliteMemory", "StoreClosed"]
