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

from aalis_api_vectorstore import (
    LexicalDrift,
    ScopeFilter,
    VectorEntry,
    VectorHit,
    VectorKey,
    VectorRecord,
    VectorStoreStats,
    VectorStoreUnavailable,
    check_delete,
    check_k,
    check_records,
    check_session_id,
    check_where,
    lexical_terms,
)

from aalis_core import get_logger
from aalis_plugin_vectorstore_sqlite._config import SqliteVectorConfig
from aalis_plugin_vectorstore_sqlite._engine import Engine, as_float32, prepare
from aalis_plugin_vectorstore_sqlite._lexical import (
    drift as lexical_drift,
    repair as lexical_repair_rows,
)
from aalis_plugin_vectorstore_sqlite._schema import connect

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
        self._logger = logger if logger is not None else get_logger("vectorstore-sqlite")
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
        state = "open" if self._executor is not None else "closed"
        return f"SqliteVectorStore({str(self.path)!r}, {state})"

    # -- lifecycle ---------------------------------------------------------------------

    async def open(self) -> SqliteVectorStore:
        """Open the file when it exists (a corrupt or newer one fails here, at start); a
        missing file is created by the first write, so a host that never indexes anything
        (or whose message store is broken) leaves no empty vector file behind."""
        async with self._open_lock:
            if self._executor is not None:
                return self
            executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"aalis-vectors {self.path.name}"
            )
            engine = None
            if self.path.exists():
                try:
                    engine = await asyncio.get_running_loop().run_in_executor(executor, self._build)
                except BaseException:
                    executor.shutdown(wait=False)
                    raise
            weakref.finalize(self, executor.shutdown, wait=False)
            self._engine, self._executor = engine, executor
        return self

    def _build(self) -> Engine:
        conn = connect(
            self.path,
            synchronous=self.config.synchronous,
            busy_timeout_ms=self.config.busy_timeout_ms,
        )
        return Engine(conn, self.path)

    async def close(self) -> None:
        """Close the connection after every call already submitted; idempotent."""
        engine, executor = self._engine, self._executor
        if executor is None:
            return
        self._engine = self._executor = None
        try:
            if engine is not None:
                await asyncio.get_running_loop().run_in_executor(executor, engine.close)
        finally:
            executor.shutdown(wait=True)

    async def __aenter__(self) -> SqliteVectorStore:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, fn: Callable[[Engine], T], *, empty: T, create: bool = False) -> T:
        """Run ``fn`` on the worker; with no file yet, ``empty`` (reads) or create it (writes)."""
        executor = self._executor
        if executor is None:
            raise StoreClosed(f"the vector store {self.path} is not open")
        loop = asyncio.get_running_loop()
        if self._engine is None:
            async with self._open_lock:
                if self._engine is None:
                    if not create and not self.path.exists():
                        return empty
                    self._engine = await loop.run_in_executor(executor, self._build)
        engine = self._engine
        return await loop.run_in_executor(executor, fn, engine)

    # -- the contract ------------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> int:
        batch = _last_per_key(check_records(records))
        if not batch:
            return 0
        # Checked and encoded on the worker: a large batch's numpy work stays off the loop.
        return await self._call(lambda engine: engine.upsert(prepare(batch)), empty=0, create=True)

    async def search(self, vector: Sequence[float], k: int, where: ScopeFilter) -> list[VectorHit]:
        k = check_k(k)
        where = check_where(where)
        query = as_float32(vector, what="query vector")
        return await self._call(lambda engine: engine.search(query, k, where), empty=[])

    async def lexical_search(self, query: str, k: int, where: ScopeFilter) -> list[VectorHit]:
        """FTS5 over the rows' terms, the identifier tier then BM25 (``LexicalSearch``)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        k = check_k(k)
        where = check_where(where)
        terms = lexical_terms(query)
        return await self._call(lambda engine: engine.lexical_search(terms, k, where), empty=[])

    async def lexical_check(self, session_id: str | None = None) -> LexicalDrift:
        """Rows whose FTS row is missing or stale, and FTS rows of no row (``LexicalIndexCheck``)."""
        sid = None if session_id is None else check_session_id(session_id)
        return await self._call(
            lambda engine: engine._run("BEGIN", lambda: lexical_drift(engine.conn, sid)),
            empty=LexicalDrift(),
        )

    async def lexical_repair(self, session_id: str | None = None) -> LexicalDrift:
        """Re-index what ``lexical_check`` finds, from the rows' stored text."""
        sid = None if session_id is None else check_session_id(session_id)
        return await self._call(
            lambda engine: engine._run(
                "BEGIN IMMEDIATE", lambda: lexical_repair_rows(engine.conn, sid)
            ),
            empty=LexicalDrift(),
        )

    async def delete(
        self,
        session_id: str,
        ids: Iterable[str] | None = None,
        *,
        timestamps: Iterable[int] | None = None,
    ) -> int:
        sid, wanted_ids, wanted_ts = check_delete(session_id, ids, timestamps)
        return await self._call(lambda engine: engine.delete(sid, wanted_ids, wanted_ts), empty=0)

    async def entries(self, session_id: str) -> list[VectorEntry]:
        sid = check_session_id(session_id)
        return await self._call(lambda engine: engine.entries(sid), empty=[])

    async def sessions(self) -> list[str]:
        return await self._call(lambda engine: engine.sessions(), empty=[])

    async def dropped_sessions(self) -> list[str]:
        """Sessions whose vectors the identity migration dropped (see ``DroppedSessions``)."""
        return await self._call(lambda engine: engine.dropped_sessions(), empty=[])

    async def acknowledge_dropped(self, session_ids: Sequence[str]) -> None:
        """Forget those sessions: their gaps are recorded in the message store."""
        ids = [check_session_id(s) for s in session_ids]
        await self._call(lambda engine: engine.acknowledge_dropped(ids), empty=None)

    async def delete_all(self) -> int:
        return await self._call(lambda engine: engine.delete_all(), empty=0)

    async def stats(self) -> VectorStoreStats:
        return await self._call(lambda engine: engine.stats(), empty=VectorStoreStats())


__all__ = ["SqliteVectorStore", "StoreClosed"]
