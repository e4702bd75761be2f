"""Pausing CPython's automatic garbage collector while one bounded step builds many objects.

Why: the collector runs a *full* collection (every tracked object of the process) each time the
objects promoted to its oldest generation grow by a quarter of those already there. A step
that builds one long-lived object per row of a long session (a history snapshot of 100,000
messages, the summariser's sentences) triggers several of them while it runs, each walking the
whole process, so such a step cost more per row at 10,000 rows than at 1,000 (where it
triggers none); docs/performance.md ("Compression cost") has the figures. With the collector
paused for the length of the step, what it allocated is examined once, by the next young
collection after it.

Only for steps that allocate and do not make reference cycles worth collecting meanwhile, and
that end soon (nothing inside waits for another task, a lock or the network; reading a local
SQLite file in WAL mode is fine).

The collector's switch is process-wide and steps run on several threads (the SQLite worker,
``asyncio.to_thread``), so pauses are counted under a lock: the first one turns the collector
off if it was on, the last one turns it back on only then. A collector the application turned
off stays off. (One that the application turns off *during* a pause is turned back on when
the pause ends: an application that manages the collector itself should do so between
compressions.)
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_resume = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with automatic garbage collection paused (``gc.collect`` still works)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            if _resume:
                gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                _resume = False
                gc.enable()


__all__ = ["gc_paused"]
