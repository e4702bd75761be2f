"""One dedicated thread per store that owns the SQLite connection.

Why not ``asyncio.to_thread``: a ``sqlite3.Connection`` belongs to the thread that made it,
and a pool thread is a different one each time; sharing a connection across threads would
need ``check_same_thread=False`` plus a lock on every call. A single owner thread makes every
statement of the store run in submission order on one connection, with no lock at all.

Why not ``loop.run_in_executor`` with a one-thread executor: its ``concurrent.futures``
future, the chaining onto an asyncio future and the context copy cost about 0.1 ms per call
on the reference machine, more than the indexed query itself. Here a call is one
``SimpleQueue.put`` and one ``call_soon_threadsafe`` back (measured in
``benchmarks/sqlite_history.py``).

A job already taken by the thread cannot be interrupted: if the awaiting task is cancelled,
the job still runs to the end (a write still commits) and its result is dropped, exactly as
with ``asyncio.to_thread``.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_STOP = object()


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class WorkerClosed(RuntimeError):
    """Raised when a call reaches a store whose worker thread was stopped."""


class Worker:
    """Runs callables on one thread, in order, and hands results back to the caller's loop."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self._closed

    def _run(self) -> None:
        jobs = self._jobs
        while True:
            item = jobs.get()
            if item is _STOP:
                return
            fn, args, loop, future = item
            try:
                result = fn(*args)
            except BaseException as exc:  # handed to the awaiting task, never swallowed
                ok, value = False, exc
            else:
                ok, value = True, result
            # A closed loop raises RuntimeError: nobody is waiting for this result any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_deliver, future, ok, value)

    def call(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Schedule ``fn(*args)`` on the worker thread; await the returned future."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._closed:
                raise WorkerClosed("the SQLite store is closed")
            self._jobs.put((fn, args, loop, future))
        return future

    def stop(self, final: Callable[[], None] | None = None) -> None:
        """Run ``final`` after every queued job, then end the thread (blocking, idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if final is not None:
                self._jobs.put((_call_and_ignore, (final,), _NoLoop(), None))
            self._jobs.put(_STOP)
        if threading.current_thread() is not self._thread:
            self._thread.join()


def _call_and_ignore(fn: Callable[[], None]) -> None:
    fn()


class _NoLoop:
    """Stands in for a loop for jobs submitted without one (their result is not delivered)."""

    def call_soon_threadsafe(self, *args: Any) -> None:
        return None


__all__ = ["Worker", "WorkerClosed"]
