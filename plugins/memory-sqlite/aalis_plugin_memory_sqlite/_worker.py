"""One dedicated thread per store that owns the SQLite connection.

Why not ``asyncio.to_thread``: a ``sqlite3.Connection`` belongs to the thread that made it,
and a pool thread is a different one each time; sharing a connection across threads would
need ``check_same_thread=False`` plus a lock on every call. A single owner thread makes every
statement of the store run in submission order on one connection, with no lock at all.

Why not ``loop.run_in_executor`` with a one-thread executor: its ``concurrent.futures``
future, the chaining onto an asyncio future and the context copy cost about as much as the
indexed query itself. Here a call is one ``SimpleQueue.put`` and one
``call_soon_threadsafe`` back: about half the cost of ``asyncio.to_thread`` (measured in
``benchmarks/sqlite_history.py``).

**Group commit.** A job submitted with ``call_batched`` may run together with the jobs of the
same batch function queued right behind it, in one call (for saves: one transaction, one
commit for all). Order is kept: only a consecutive run of such jobs at the head of the queue
is merged, never across another job. Each caller is answered only after the merged call
returned (for saves: after the commit), and if the merged call fails, each job of the run is
retried alone, so one bad job fails alone, unless the failure is one that retrying cannot
cure (``final_group_error``: for SQLite, the busy timeout ran out waiting for another
process's lock). Then every job of the run gets that error at once: the group had one
deadline, and retrying each job would wait the full busy timeout again, job after job.

A job already taken by the thread cannot be interrupted: if the awaiting task is cancelled,
the job still runs to the end (a write still commits) and its result is dropped, exactly as
with ``asyncio.to_thread``.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, TypeVarTuple

from aalis_api_memory import StoreClosed

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

#: At most this many jobs are merged into one batch call.
MAX_BATCH = 256

_STOP = object()


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class WorkerClosed(StoreClosed):
    """Raised when a call reaches a store whose worker thread was stopped."""


class _NoLoop:
    """Stands in for a loop for jobs submitted without one (their result is not delivered)."""

    def call_soon_threadsafe(self, *args: Any) -> None:
        return None


# A job: (fn, args, loop, future, batch_fn or None).
Job = tuple[Callable[..., Any], tuple[Any, ...], Any, Any, Any]


class Worker:
    """Runs callables on one thread, in order, and hands results back to the caller's loop."""

    def __init__(
        self, name: str, final_group_error: Callable[[BaseException], bool] | None = None
    ) -> None:
        self._final_group_error = final_group_error
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # -- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        jobs = self._jobs
        pending: Any = None
        while True:
            if pending is None:
                item = jobs.get()
            else:
                item, pending = pending, None
            if item is _STOP:
                return
            if item[4] is None:
                self._run_one(item)
                continue
            group = [item]
            batch = item[4]
            while len(group) < MAX_BATCH:
                try:
                    following = jobs.get_nowait()
                except queue.Empty:
                    break
                if following is not _STOP and following[4] == batch:
                    group.append(following)
                else:
                    pending = following
                    break
            if len(group) == 1:
                self._run_one(item)
            else:
                self._run_group(group)

    @staticmethod
    def _run_one(job: Job) -> None:
        fn, args, loop, future, _batch = job
        try:
            result = fn(*args)
        except BaseException as exc:  # handed to the awaiting task, never swallowed
            ok, value = False, exc
        else:
            ok, value = True, result
        # A closed loop raises RuntimeError: nobody is waiting for this result any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_deliver, future, ok, value)

    def _run_group(self, group: list[Job]) -> None:
        try:
            results = group[0][4]([job[1] for job in group])
        except BaseException as exc:
            if self._final_group_error is not None and self._final_group_error(exc):
                for job in group:  # the group's one deadline has passed: answer all now
                    with contextlib.suppress(RuntimeError):
                        job[2].call_soon_threadsafe(_deliver, job[3], False, exc)
                return
            # Nothing of the merged call was kept; retry each alone so only a bad one fails.
            for job in group:
                self._run_one(job)
            return
        for job, result in zip(group, results, strict=True):
            with contextlib.suppress(RuntimeError):
                job[2].call_soon_threadsafe(_deliver, job[3], True, result)

    # -- the callers ---------------------------------------------------------------------

    def _put(self, job: Any) -> None:
        with self._lock:
            if self._closed:
                raise WorkerClosed("the SQLite store is closed")
            self._jobs.put(job)

    def call(self, fn: Callable[[*Ts], T], *args: *Ts) -> asyncio.Future[T]:
        """Schedule ``fn(*args)`` on the worker thread; await the returned future.

        Typed like a direct call: ``await worker.call(engine.get_history, "s", 50)`` is a
        ``list[Message]``, and wrong arguments are a type error, not a failure on the thread.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._put((fn, args, loop, future, None))
        return future

    def call_batched(
        self,
        batch_fn: Callable[[Sequence[tuple[*Ts]]], Sequence[T]],
        fn: Callable[[*Ts], T],
        *args: *Ts,
    ) -> asyncio.Future[T]:
        """Schedule ``fn(*args)``, which may run merged as ``batch_fn([args, ...])``.

        ``batch_fn`` must do all or nothing and return one result per job, in order;
        batch functions are compared with ``==`` (bound methods of one object are equal).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._put((fn, args, loop, future, batch_fn))
        return future

    def stop(self, final: Callable[[], None] | None = None) -> None:
        """Run ``final`` after every queued job, then end the thread (blocking, idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if final is not None:
                self._jobs.put((final, (), _NoLoop(), None, None))
            self._jobs.put(_STOP)
        if threading.current_thread() is not self._thread:
            self._thread.join()


__all__ = ["MAX_BATCH", "Worker", "WorkerClosed"]
