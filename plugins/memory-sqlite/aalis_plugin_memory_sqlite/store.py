"""``SqliteMemory``: the ``MemoryService`` of this backend, every optional method included.

Each method validates and encodes its input on the caller's side with the shared helpers of
``aalis_api_memory.validation`` (so bad input raises before anything is read or written, the
same way on every backend, and the stored value is the value at call time), then hands the
storage work to the store's worker thread (``worker.py``), which owns the connection.
Reads go to a second connection on a second thread (``reader.py``), so they never queue
behind a write that is waiting for another process's lock.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import structlog
from aalis_api_memory.errors import StoreClosed
from aalis_api_memory.exact import (
    HistorySnapshot,
    MetadataGuard,
    check_guard,
    check_ids,
    check_marker,
)
from aalis_api_memory.types import (
    MetadataEntry,
    MetadataOp,
    RecentMessageRecord,
    RecentMessagesQuery,
    SessionInfo,
    StoredMessage,
)
from aalis_api_memory.validation import (
    DEFAULT_FULL_HISTORY_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    DEFAULT_RECENT_LIMIT,
    check_count,
    check_keep,
    check_key,
    check_limit,
    check_message,
    check_namespace,
    check_recent_query,
    check_replacement,
    check_session_id,
    check_str_filter,
    check_timestamp,
    check_timestamps,
    encode_batch,
    encode_metadata,
)
from aalis_schema_message import Message, now_ms

import aalis_plugin_memory_sqlite.exact as exact
from aalis_plugin_memory_sqlite.backup import BackupResult, backup_database
from aalis_plugin_memory_sqlite.bulk_writes import rewrite_plan
from aalis_plugin_memory_sqlite.codec import message_columns
from aalis_plugin_memory_sqlite.config import SqliteConfig
from aalis_plugin_memory_sqlite.engine import Engine, Limit, Row
from aalis_plugin_memory_sqlite.reader import connect_reader
from aalis_plugin_memory_sqlite.schema import connect
from aalis_plugin_memory_sqlite.worker import Worker, WorkerClosed

T = TypeVar("T")


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


class SqliteMemory:
    """Per-session history and metadata in one SQLite file (WAL; several processes may share it).

    ``await store.open()`` (or ``async with SqliteMemory(path) as store``) creates or migrates
    the file; ``await store.close()`` releases it.
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

    @property
    def range_query_limit(self) -> int:
        """The cap of ``get_messages_by_session_range`` (the earliest N of the range)."""
        return self.config.range_query_limit

    @property
    def cross_session_max_limit(self) -> int:
        """The cap of ``get_recent_messages_across_sessions``."""
        return self.config.cross_session_max_limit

    async def run_on_connection(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` on the worker thread, after every call submitted before.

        For diagnostics, tests and benchmarks (``PRAGMA`` checks, timing the synchronous
        engine); the connection must not escape ``fn``, it belongs to the worker thread.
        """
        engine, worker = self._engine, self._worker
        if engine is None or worker is None:
            raise StoreClosed("the SQLite memory store is not open (await store.open() first)")
        return await worker.call(fn, engine.conn)

    @property
    def engine(self) -> Engine:
        """The synchronous engine; only code running on the worker thread may use it."""
        if self._engine is None:
            raise StoreClosed("the SQLite memory store is not open")
        return self._engine

    def _submit(self, method: str, *args: Any) -> asyncio.Future[Any]:
        engine, worker = self._engine, self._worker
        if engine is None or worker is None:
            raise StoreClosed("the SQLite memory store is not open (await store.open() first)")
        return worker.call(getattr(engine, method), *args)

    def _read(self, method: str, *args: Any) -> asyncio.Future[Any]:
        """Run a read on the reader connection (it never waits behind the writer thread)."""
        engine, worker = self._read_engine, self._reader
        if engine is None or worker is None:
            raise StoreClosed("the SQLite memory store is not open (await store.open() first)")
        return worker.call(getattr(engine, method), *args)

    # -- messages ----------------------------------------------------------------------

    async def save_message(self, session_id: str, message: Message) -> None:
        check_session_id(session_id)
        check_message(message)
        timestamp = message.timestamp
        row = message_columns(message, now_ms() if timestamp is None else timestamp)
        engine, worker = self._engine, self._worker
        if engine is None or worker is None:
            raise StoreClosed("the SQLite memory store is not open (await store.open() first)")
        # Saves queued together commit together (group commit); each is answered after it.
        await worker.call_batched(engine.save_messages, engine.save_message, session_id, row)

    async def get_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        check_session_id(session_id)
        checked = check_limit(limit, DEFAULT_HISTORY_LIMIT)
        if checked == 0:
            return []
        return await self._read("get_history", session_id, checked)  # type: ignore[no-any-return]

    async def count_history(self, session_id: str) -> int:
        check_session_id(session_id)
        return await self._read("count_history", session_id)  # type: ignore[no-any-return]

    async def get_full_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        check_session_id(session_id)
        checked = check_limit(limit, DEFAULT_FULL_HISTORY_LIMIT)
        if checked == 0:
            return []
        return await self._read("get_full_history", session_id, checked)  # type: ignore[no-any-return]

    async def archive_span(self, session_id: str, count: Limit, keep: Sequence[int] = ()) -> int:
        check_session_id(session_id)
        checked = check_count(count)
        positions = check_keep(keep)
        if checked == 0:
            return 0
        return await self._submit("archive_span", session_id, checked, positions)  # type: ignore[no-any-return]

    async def clear_session(self, session_id: str) -> None:
        check_session_id(session_id)
        await self._submit("clear_session", session_id)

    # -- exact archiving (aalis_api_memory.exact; the SQL is in exact.py) -----------------

    def _on_connection(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        engine, worker = self._engine, self._worker
        if engine is None or worker is None:
            raise StoreClosed("the SQLite memory store is not open (await store.open() first)")
        return worker.call(fn, engine.conn, *args)

    async def history_snapshot(self, session_id: str) -> HistorySnapshot:
        check_session_id(session_id)
        report = self.engine._corrupt(session_id)
        messages, ids = await self._on_connection(exact.history_snapshot, session_id, report)
        return HistorySnapshot(tuple(messages), tuple(ids))

    async def archive_exact(
        self,
        session_id: str,
        ids: Sequence[str],
        *,
        guard: MetadataGuard,
        marker: Message | None = None,
    ) -> int:
        check_session_id(session_id)
        wanted = check_ids(ids)
        checked = check_guard(guard)
        stamp = check_marker(marker)
        row = None
        if stamp is not None:
            row = message_columns(stamp, now_ms() if stamp.timestamp is None else stamp.timestamp)
        return await self._on_connection(
            exact.archive_exact, session_id, wanted, checked, row, now_ms()
        )

    async def clear_all(self) -> None:
        await self._submit("clear_all")

    async def get_messages_by_session_range(
        self,
        session_id: str,
        from_ts: int,
        to_ts: int,
        roles: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] | None = None,
    ) -> list[Message]:
        check_session_id(session_id)
        start = check_timestamp(from_ts, "from_ts")
        end = check_timestamp(to_ts, "to_ts")
        role_list = check_str_filter(roles, "roles")
        kind_list = check_str_filter(exclude_kinds, "exclude_kinds")
        return await self._read(  # type: ignore[no-any-return]
            "get_messages_by_session_range",
            session_id,
            start,
            end,
            tuple(dict.fromkeys(role_list)) if role_list else None,
            tuple(dict.fromkeys(kind_list)) if kind_list else None,
        )

    async def get_recent_messages_across_sessions(
        self, query: RecentMessagesQuery
    ) -> list[RecentMessageRecord]:
        check_recent_query(query)
        limit = check_limit(query.limit, DEFAULT_HISTORY_LIMIT, "query.limit")
        count = int(min(limit, self.config.cross_session_max_limit))
        if count == 0:
            return []
        pairs = await self._read(
            "get_recent_messages_across_sessions",
            count,
            tuple(dict.fromkeys(query.effective_roles)),
            None if query.kinds is None else tuple(dict.fromkeys(query.kinds)),
            tuple(dict.fromkeys(query.exclude_kinds)) if query.exclude_kinds else None,
            query.since_ts,
            query.platform,
            tuple(dict.fromkeys(query.exclude_session_ids)) if query.exclude_session_ids else None,
        )
        return [RecentMessageRecord(session_id, message) for session_id, message in pairs]

    async def update_message_content(
        self, session_id: str, old_text: str, new_text: str, recent_limit: Limit | None = None
    ) -> int:
        check_session_id(session_id)
        old, new = check_replacement(old_text, new_text)
        checked = check_limit(recent_limit, DEFAULT_RECENT_LIMIT, "recent_limit")
        if checked == 0:
            return 0
        # Read and decode with no lock, encode off every store thread, and take the write
        # lock only to apply the changed rows (bulk_writes.py).
        rows = await self._read("rewrite_candidates", session_id, checked)
        engine = self.engine
        updates = await asyncio.to_thread(
            rewrite_plan, rows, old, new, engine.corrupt_reporter(session_id)
        )
        if not updates:
            return 0
        return await self._submit("apply_rewrites", session_id, updates, old, new)  # type: ignore[no-any-return]

    async def delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        check_session_id(session_id)
        values = check_timestamps(timestamps)
        if not values:
            return 0
        return await self._submit(  # type: ignore[no-any-return]
            "delete_messages_by_timestamps", session_id, values
        )

    async def list_sessions(self) -> list[SessionInfo]:
        return await self._read("list_sessions")  # type: ignore[no-any-return]

    async def export_session(self, session_id: str) -> list[StoredMessage]:
        check_session_id(session_id)
        pairs = await self._read("export_session", session_id)
        return [StoredMessage(message, archived) for message, archived in pairs]

    async def import_messages(self, session_id: str, records: Sequence[StoredMessage]) -> int:
        check_session_id(session_id)
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise TypeError(
                f"records must be a sequence of StoredMessage, got {type(records).__name__}"
            )
        rows: list[tuple[bool, Row]] = []
        now = now_ms()
        for record in list(records):
            if not isinstance(record, StoredMessage):
                raise TypeError(
                    f"records must hold StoredMessage items, got {type(record).__name__}"
                )
            message = check_message(record.message)
            if not isinstance(record.archived, bool):
                raise TypeError(
                    f"StoredMessage.archived must be a bool, got {type(record.archived).__name__}"
                )
            timestamp = message.timestamp
            rows.append(
                (record.archived, message_columns(message, now if timestamp is None else timestamp))
            )
        if not rows:
            return 0
        return await self._submit("import_messages", session_id, rows)  # type: ignore[no-any-return]

    # -- metadata ----------------------------------------------------------------------

    async def save_metadata(self, namespace: str, key: str, data: dict[str, Any]) -> None:
        check_namespace(namespace)
        check_key(key)
        text = encode_metadata(data)
        await self._submit("save_metadata", namespace, key, text, now_ms())

    async def get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        check_namespace(namespace)
        check_key(key)
        return await self._read("get_metadata", namespace, key)  # type: ignore[no-any-return]

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]:
        check_namespace(namespace)
        return await self._read("list_metadata", namespace)  # type: ignore[no-any-return]

    async def list_metadata_keys(self, namespace: str) -> list[str]:
        check_namespace(namespace)
        return await self._read("list_metadata_keys", namespace)  # type: ignore[no-any-return]

    async def delete_metadata(self, namespace: str, key: str) -> None:
        check_namespace(namespace)
        check_key(key)
        await self._submit("delete_metadata", namespace, key)

    async def commit_metadata(self, ops: Sequence[MetadataOp]) -> None:
        encoded = encode_batch(ops)  # the whole batch, before anything is written
        if not encoded:
            return
        await self._submit("commit_metadata", encoded, now_ms())

    async def backup(self, destination: str | os.PathLike[str]) -> BackupResult:
        """Write a consistent copy of the whole database to ``destination`` (``aalis backup``).

        Online: other connections and processes keep reading and writing meanwhile.
        See ``backup.py`` and docs/backends/sqlite.md (backups and restores).
        """
        if self._engine is None:
            raise StoreClosed("the SQLite memory store is not open (await store.open() first)")
        return await asyncio.to_thread(
            backup_database,
            self.path,
            Path(os.fspath(destination)),
            busy_timeout_ms=self.config.busy_timeout_ms,
        )

    async def list_namespaces(self) -> list[str]:
        return await self._read("list_namespaces")  # type: ignore[no-any-return]


__all__ = ["SqliteMemory", "StoreClosed"]
