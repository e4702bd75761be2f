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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, TypeVarTuple

import structlog
from aalis_api_memory import (
    CompleteMemoryBackend,
    EncodedOp,
    ExactCommit,
    HistorySnapshot,
    ImportRecord,
    MetadataEntry,
    RangeQuery,
    RecentMessageRecord,
    RecentQuery,
    SessionInfo,
    StoreClosed,
    StoredMessage,
    StoredRecord,
)
from aalis_schema_message import Message

import aalis_plugin_memory_sqlite.exact as exact
import aalis_plugin_memory_sqlite.leases as leases
from aalis_plugin_memory_sqlite.backup import BackupResult, backup_database
from aalis_plugin_memory_sqlite.bulk_writes import rewrite_plan
from aalis_plugin_memory_sqlite.codec import Row, message_columns
from aalis_plugin_memory_sqlite.config import SqliteConfig
from aalis_plugin_memory_sqlite.engine import Engine, Limit, id_conflict, is_id_conflict
from aalis_plugin_memory_sqlite.reader import connect_reader
from aalis_plugin_memory_sqlite.schema import connect
from aalis_plugin_memory_sqlite.worker import Worker, WorkerClosed

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

_NOT_OPEN = "the SQLite memory store is not open (await store.open() first)"


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


class SqliteMemory(CompleteMemoryBackend):
    """Per-session history and metadata in one SQLite file (WAL; several processes may share it).

    ``await store.open()`` (or ``async with SqliteMemory(path) as store``) creates or migrates
    the file; ``await store.close()`` releases it. Arguments are checked by
    ``CompleteMemoryBackend``; the storage methods below hand the work to the threads.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        busy_timeout_ms: int = 5000,
        range_query_limit: int = 500,
        cross_session_max_limit: int = 1000,
        logger: Any = None,
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or a path, got {type(path).__name__}")
        # The config class carries the validation rules; reuse them for direct construction.
        self.config = SqliteConfig(
            path=os.fspath(path),
            synchronous=synchronous,
            busy_timeout_ms=busy_timeout_ms,
            range_query_limit=range_query_limit,
            cross_session_max_limit=cross_session_max_limit,
        )
        self.path = Path(os.fspath(path))
        self.range_query_limit = self.config.range_query_limit
        self.cross_session_max_limit = self.config.cross_session_max_limit
        self._logger = logger if logger is not None else structlog.get_logger("aalis.memory-sqlite")
        self._worker: Worker | None = None
        self._engine: Engine | None = None
        self._reader: Worker | None = None
        self._read_engine: Engine | None = None
        self._open_lock = asyncio.Lock()

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

    # -- lifecycle ---------------------------------------------------------------------

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

    @property
    def engine(self) -> Engine:
        """The synchronous engine; only code running on the worker thread may use it."""
        if self._engine is None:
            raise StoreClosed("the SQLite memory store is not open")
        return self._engine

    def _writer(self) -> tuple[Engine, Worker]:
        engine, worker = self._engine, self._worker
        if engine is None or worker is None:
            raise StoreClosed(_NOT_OPEN)
        return engine, worker

    def _submit(self, fn: Callable[[Engine, *Ts], T], *args: *Ts) -> asyncio.Future[T]:
        """Run ``fn(engine, *args)`` on the writer thread, after every call submitted before."""
        engine, worker = self._writer()
        return worker.call(fn, engine, *args)

    def _read(self, fn: Callable[[Engine, *Ts], T], *args: *Ts) -> asyncio.Future[T]:
        """Run a read on the reader connection (it never waits behind the writer thread)."""
        engine, worker = self._read_engine, self._reader
        if engine is None or worker is None:
            raise StoreClosed(_NOT_OPEN)
        return worker.call(fn, engine, *args)

    def _on_connection(
        self, fn: Callable[[sqlite3.Connection, *Ts], T], *args: *Ts
    ) -> asyncio.Future[T]:
        """Run ``fn(connection, *args)`` on the writer thread (exact.py's functions)."""
        engine, worker = self._writer()
        return worker.call(fn, engine.conn, *args)

    # -- messages ----------------------------------------------------------------------

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        row = message_columns(message, timestamp)
        engine, worker = self._writer()
        # Saves queued together commit together (group commit); each is answered after it.
        await worker.call_batched(engine.save_messages, engine.save_message, session_id, row)

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        return await self._read(Engine.get_history, session_id, limit)

    async def _count_history(self, session_id: str) -> int:
        return await self._read(Engine.count_history, session_id)

    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        return await self._read(Engine.get_full_history, session_id, limit)

    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        return await self._submit(Engine.archive_span, session_id, count, keep)

    async def _clear_session(self, session_id: str) -> None:
        await self._submit(Engine.clear_session, session_id)

    # -- exact archiving (aalis_api_memory._exact; the SQL is in exact.py) -----------------

    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        report = self.engine.corrupt_reporter(session_id)
        messages, ids = await self._on_connection(exact.history_snapshot, session_id, report)
        return HistorySnapshot(tuple(messages), tuple(ids))

    async def _archive_exact(self, session_id: str, commit: ExactCommit) -> int:
        marker = commit.marker
        row = None if marker is None else message_columns(marker.message, marker.timestamp)
        try:
            return await self._on_connection(
                exact.archive_exact, session_id, commit.ids, commit.guard, row, commit.updated_at
            )
        except sqlite3.IntegrityError as exc:
            if is_id_conflict(exc):  # the marker named a stored id
                raise id_conflict(exc) from None
            raise

    async def _clear_all(self) -> None:
        await self._submit(Engine.clear_all)

    # -- leases (aalis_api_memory._leases; the SQL is in leases.py) ------------------------

    async def _acquire_lease(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        return await self._on_connection(leases.acquire_lease, name, holder, ttl_ms, now)

    async def _release_lease(self, name: str, holder: str) -> bool:
        return await self._on_connection(leases.release_lease, name, holder)

    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        return await self._read(
            Engine.get_messages_by_session_range,
            session_id,
            query.from_ts,
            query.to_ts,
            query.roles,
            query.exclude_kinds,
        )

    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        pairs = await self._read(
            Engine.get_recent_messages_across_sessions,
            query.limit,
            query.roles,
            query.kinds,
            query.exclude_kinds,
            query.since_ts,
            query.platform,
            query.exclude_session_ids,
        )
        return [RecentMessageRecord(session_id, message) for session_id, message in pairs]

    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        # Read and decode with no lock, encode off every store thread, and take the write
        # lock only to apply the changed rows (bulk_writes.py).
        rows = await self._read(Engine.rewrite_candidates, session_id, recent_limit)
        engine = self.engine
        updates = await asyncio.to_thread(
            rewrite_plan, rows, old, new, engine.corrupt_reporter(session_id)
        )
        if not updates:
            return 0
        return await self._submit(Engine.apply_rewrites, session_id, updates, old, new)

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        return await self._submit(Engine.delete_messages_by_timestamps, session_id, timestamps)

    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        return await self._read(Engine.get_messages_by_ids, ids)

    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        return await self._submit(Engine.delete_messages_by_ids, session_id, ids)

    async def _list_sessions(self) -> list[SessionInfo]:
        return await self._read(Engine.list_sessions)

    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        pairs = await self._read(Engine.export_session, session_id)
        return [StoredMessage(message, archived) for message, archived in pairs]

    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        rows: list[tuple[bool, Row]] = [
            (record.archived, message_columns(record.message, record.timestamp))
            for record in records
        ]
        return await self._submit(Engine.import_messages, session_id, rows)

    # -- metadata ----------------------------------------------------------------------

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        await self._submit(Engine.save_metadata, namespace, key, text, updated_at)

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        return await self._read(Engine.get_metadata, namespace, key)

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        return await self._read(Engine.list_metadata, namespace)

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        return await self._read(Engine.list_metadata_keys, namespace)

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        await self._submit(Engine.delete_metadata, namespace, key)

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        await self._submit(Engine.commit_metadata, ops, updated_at)

    async def _list_namespaces(self) -> list[str]:
        return await self._read(Engine.list_namespaces)

    async def backup(self, destination: str | os.PathLike[str]) -> BackupResult:
        """Write a consistent copy of the whole database to ``destination`` (``aalis backup``).

        Online: other connections and processes keep reading and writing meanwhile.
        See ``backup.py`` and docs/backends/sqlite.md (backups and restores).
        """
        if self._engine is None:
            raise StoreClosed(_NOT_OPEN)
        return await asyncio.to_thread(
            backup_database,
            self.path,
            Path(os.fspath(destination)),
            busy_timeout_ms=self.config.busy_timeout_ms,
        )


__all__ = ["SqliteMemory", "StoreClosed"]
