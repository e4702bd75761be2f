"""The store's worker thread: order, errors, cancellation, closing."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from aalis_plugin_memory_sqlite._worker import Worker, WorkerClosed


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


async def test_consecutive_batched_jobs_merge_but_never_across_other_jobs() -> None:
    worker = Worker("test")
    calls: list[object] = []
    gate = threading.Event()

    def single(x: int) -> int:
        calls.append(("single", x))
        return x * 10

    def batch(items: list[tuple[int]]) -> list[int]:
        calls.append(("batch", [x for (x,) in items]))
        return [x * 10 for (x,) in items]

    def plain(tag: str) -> str:
        calls.append(("plain", tag))
        return tag

    try:
        blocker = worker.call(gate.wait)  # holds the thread while the queue fills up
        futures: list[asyncio.Future[object]] = [
            *(worker.call_batched(batch, single, i) for i in range(5)),
            worker.call(plain, "between"),
            *(worker.call_batched(batch, single, i) for i in range(5, 7)),
            worker.call(plain, "alone-next"),
            worker.call_batched(batch, single, 9),
        ]
        gate.set()
        await blocker
        results = await asyncio.gather(*futures)
    finally:
        worker.stop()
    assert results == [0, 10, 20, 30, 40, "between", 50, 60, "alone-next", 90]
    assert calls == [
        ("batch", [0, 1, 2, 3, 4]),
        ("plain", "between"),
        ("batch", [5, 6]),
        ("plain", "alone-next"),
        ("single", 9),
    ]


async def test_a_failing_batch_is_retried_job_by_job() -> None:
    worker = Worker("test")
    gate = threading.Event()

    def single(x: int) -> int:
        if x == 3:
            raise ValueError("three")
        return x

    def batch(items: list[tuple[int]]) -> list[int]:
        raise RuntimeError("the merged call failed")

    try:
        blocker = worker.call(gate.wait)
        futures = [worker.call_batched(batch, single, i) for i in range(6)]
        gate.set()
        await blocker
        results = await asyncio.gather(*futures, return_exceptions=True)
    finally:
        worker.stop()
    assert results[:3] == [0, 1, 2]
    assert isinstance(results[3], ValueError)
    assert results[4:] == [4, 5]
