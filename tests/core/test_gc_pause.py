"""gc_paused: the collector is off inside, back as it was after, across threads and nesting."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from aalis_core._gc_pause import gc_paused


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_resumed_after_even_when_the_body_raises() -> None:
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_the_application_turned_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_pauses_on_two_threads_resume_only_when_the_last_ends() -> None:
    gc.enable()
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with gc_paused():
        thread.start()
        assert inside.wait(10)
    # This thread's pause ended first: the other one still holds the collector off.
    assert not gc.isenabled()
    leave.set()
    thread.join(10)
    assert gc.isenabled()
