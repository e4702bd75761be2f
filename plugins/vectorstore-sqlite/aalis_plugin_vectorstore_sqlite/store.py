"""``SqliteVectorStore``: the ``VectorStore`` of this plugin.

Arguments are checked on the caller's side with the contract's helpers (bad input fails the
same way as on every store, before anything is touched); the work runs on one dedicated
thread that owns the ``sqlite3`` connection and the RAM matrices, so statements run in
submission order without locks, and numpy's matrix products (which release the GIL) never
block the event loop.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import structlog
from aalis_api_vectorstore import (
    ScopeFilter,
    VectorHit,
    VectorKey,
    VectorRecord,
    VectorStoreStats,
    VectorStoreUnavailable,
)
from aalis_api_vectorstore.validation import (
    check_k,
    check_records,
    check_session_id,
    check_timestamps,
    check_where,
)

from aalis_plugin_vectorstore_sqlite.config import SqliteVectorConfig
from aalis_plugin_vectorstore_sqlite.engine import Engine, as_float32, prepare
from aalis_plugin_vectorstore_sqlite.schema import connect

T = TypeVar("T")


class StoreClosed(VectorStoreUnavailable):
    """The store is not open (never opened, or closed)."""


def _last_per_key(records: list[VectorRecord]) -> list[VectorRecord]:
    """A batch naming one key twice keeps the last record, as two upserts in a row would."""
    latest: dict[VectorKey, VectorRecord] = {}
    for record in records:
        latest.pop(record.key, None)
        latest[record.key] = record
    return list(latest.values())


class SqliteVectorStore:
    """Message vectors in one SQLite file (WAL; several processes may share it).

    ``await store.open()`` (or ``async with SqliteVectorStore(path) as store``) creates or
    migrates the file; ``await store.close()`` releases it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        busy_timeout_ms: int = 5000,
        logger: Any = None,
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"path must be a str or a path, got {type(path).__name__}")
        self.config = SqliteVectorConfig(
            path=os.fspath(path), synchronous=synchronous, busy_timeout_ms=busy_timeout_ms
        )
        self.path = Path(os.fspath(path))
        self._logger = (
            logger if logger is not None else structlog.get_logger("aalis.vectorstore-sqlite")
        )
        self._executor: ThreadPoolExecutor | None = None
        self._engine: Engine | None = None
        self._open_lock = asyncio.Lock()

    @classmethod
    def from_config(
        cls, config: SqliteVectorConfig, data_dir: str | os.PathLike[str], logger: Any = None
    ) -> SqliteVectorStore:
        """The store a host would build: ``config.path`` taken relative to ``data_dir``."""
        return cls(
            Path(data_dir) / Path(config.path).expanduser(),
            synchronous=config.synchronous,
            busy_timeout_ms=config.busy_timeout_ms,
            logger=logger,
        )

    def __repr__(self) -> str:
        state = "open" if self._engine is not None else "closed"
        return f"SqliteVectorStore({str(self.path)!r}, {state})"

    # -- lifecycle ---------------------------------------------------------------------

    async def open(self) -> SqliteVectorStore:
        async with self._open_lock:
            if self._engine is not None:
                return self
            executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"aalis-vectors {self.path.name}"
            )
            path, config = self.path, self.config

            def build() -> Engine:
                conn = connect(
                    path, synchronous=config.synchronous, busy_timeout_ms=config.busy_timeout_ms
                )
                return Engine(conn, path)

            try:
                engine = await asyncio.get_running_loop().run_in_executor(executor, build)
            except BaseException:
                executor.shutdown(wait=False)
                raise
            weakref.finalize(self, executor.shutdown, wait=False)
            self._engine, self._executor = engine, executor
        return self

    async def close(self) -> None:
        """Close the connection after every call already submitted; idempotent."""
        engine, executor = self._engine, self._executor
        if engine is None or executor is None:
            return
        self._engine = self._executor = None
        try:
            await asyncio.get_running_loop().run_in_executor(executor, engine.close)
        finally:
            executor.shutdown(wait=True)

    async def __aenter__(self) -> SqliteVectorStore:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, fn: Callable[[Engine], T]) -> T:
        engine, executor = self._engine, self._executor
        if engine is None or executor is None:
            raise StoreClosed(f"the vector store {self.path} is not open")
        return await asyncio.get_running_loop().run_in_executor(executor, fn, engine)

    # -- the contract ------------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> int:
        batch = _last_per_key(check_records(records))
        if not batch:
            return 0
        # Checked and encoded on the worker: a large batch's numpy work stays off the loop.
        return await self._call(lambda engine: engine.upsert(prepare(batch)))

    async def search(self, vector: Sequence[float], k: int, where: ScopeFilter) -> list[VectorHit]:
        k = check_k(k)
        where = check_where(where)
        query = as_float32(vector, what="query vector")
        return await self._call(lambda engine: engine.search(query, k, where))

    async def delete(self, session_id: str, timestamps: Iterable[int] | None = None) -> int:
        session_id = check_session_id(session_id)
        wanted = check_timestamps(timestamps)
        return await self._call(lambda engine: engine.delete(session_id, wanted))

    async def delete_all(self) -> int:
        return await self._call(lambda engine: engine.delete_all())

    async def stats(self) -> VectorStoreStats:
        return await self._call(lambda engine: engine.stats())


__all__ = ["SqliteVectorStore", "StoreClosed"]
