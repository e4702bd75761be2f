"""What the job modules of ``SqliteMemory`` share: the two threads and their typed calls.

``SqliteBase`` holds the store's state (the validated config, the path, the writer thread and
its ``Engine``, the reader thread and its ``Engine``, the logger) and the typed ways to run
work on them: ``_submit`` (writer, in order), ``_read`` (reader connection) and
``_on_connection`` (writer, a function of the connection). Each job of the contract is a mixin
over it (``history.py``, ``queries.py``, ``identity.py``, ``transfer.py``, ``exact.py``,
``metadata.py``, ``leases.py``); ``store.py`` assembles them and opens the file. The layout is
the same in every memory backend (docs/backends/implementing.md, "One layout for every
backend").
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, TypeVarTuple

from aalis_api_memory import CompleteMemoryBackend, StoreClosed

from aalis_core import get_logger
from aalis_plugin_memory_sqlite._config import SqliteConfig
from aalis_plugin_memory_sqlite._engine import Engine
from aalis_plugin_memory_sqlite._worker import Worker

T = TypeVar("T")


Ts = TypeVarTuple("Ts")


NOT_OPEN = "the SQLite memory store is not open (await store.open() first)"


class SqliteBase(CompleteMemoryBackend):
    """The state and the thread calls of ``SqliteMemory`` (its job mixins build on it)."""

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
        self._logger = logger if logger is not None else get_logger("memory-sqlite")
        self._worker: Worker | None = None
        self._engine: Engine | None = None
        self._reader: Worker | None = None
        self._read_engine: Engine | None = None
        self._open_lock = asyncio.Lock()

    @property
    def engine(self) -> Engine:
        """The synchronous engine; only code running on the worker thread may use it."""
        if self._engine is None:
            raise StoreClosed("the SQLite memory store is not open")
        return self._engine

    def _writer(self) -> tuple[Engine, Worker]:
        engine, worker = self._engine, self._worker
        if engine is None or worker is None:
            raise StoreClosed(NOT_OPEN)
        return engine, worker

    def _submit(self, fn: Callable[[Engine, *Ts], T], *args: *Ts) -> asyncio.Future[T]:
        """Run ``fn(engine, *args)`` on the writer thread, after every call submitted before."""
        engine, worker = self._writer()
        return worker.call(fn, engine, *args)

    def _read(self, fn: Callable[[Engine, *Ts], T], *args: *Ts) -> asyncio.Future[T]:
        """Run a read on the reader connection (it never waits behind the writer thread)."""
        engine, worker = self._read_engine, self._reader
        if engine is None or worker is None:
            raise StoreClosed(NOT_OPEN)
        return worker.call(fn, engine, *args)

    def _on_connection(
        self, fn: Callable[[sqlite3.Connection, *Ts], T], *args: *Ts
    ) -> asyncio.Future[T]:
        """Run ``fn(connection, *args)`` on the writer thread (exact.py's functions)."""
        engine, worker = self._writer()
        return worker.call(fn, engine.conn, *args)


__all__ = ["NOT_OPEN", "SqliteBase"]
