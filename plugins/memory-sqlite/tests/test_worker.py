"""The store's worker thread: order, errors, cancellation, closing."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from aalis_plugin_memory_sqlite.worker import Worker, WorkerClosed


async def test_jobs_run_in_order_on_one_thread() -> None:
    worker = Worker("test")
    seen: list[tuple[int, str]] = []
    try:
        futures = [
            worker.call(lambda i=i: seen.append((i, threading.current_thread().name)))
            for i in range(200)
        ]
        await asyncio.gather(*futures)
    finally:
        worker.stop()
    assert [i for i, _ in seen] == list(range(200))
    assert {name for _, name in seen} == {"test"}
    assert threading.current_thread().name != "test"


async def test_errors_reach_the_caller_and_the_worker_goes_on() -> None:
    worker = Worker("test")

    def boom() -> None:
        raise KeyError("nope")

    try:
        with pytest.raises(KeyError, match="nope"):
            await worker.call(boom)
        assert await worker.call(lambda: 41 + 1) == 42
    finally:
        worker.stop()


async def test_a_cancelled_call_still_runs_to_the_end() -> None:
    worker = Worker("test")
    done = threading.Event()

    def slow() -> str:
        time.sleep(0.05)
        done.set()
        return "finished"

    try:
        future = worker.call(slow)
        future.cancel()
        # The job already queued is not interrupted (a write would still commit).
        await worker.call(lambda: None)
        assert done.is_set()
    finally:
        worker.stop()


async def test_a_stopped_worker_refuses_calls_and_runs_final_last() -> None:
    worker = Worker("test")
    order: list[str] = []
    pending = worker.call(lambda: order.append("job"))
    worker.stop(final=lambda: order.append("final"))
    worker.stop()  # idempotent
    await pending
    assert order == ["job", "final"]
    with pytest.raises(WorkerClosed):
        worker.call(lambda: None)
