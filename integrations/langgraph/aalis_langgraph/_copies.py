"""The history copy made behind the checkpoints (docs/integrations/langgraph.md, "The
thread's conversation").

A thread's history is derived from its newest root checkpoint: copying it after every put
made each put several store round trips and Python conversions longer than the checkpoint
itself (about 3x LangGraph's own saver, docs/performance.md), although the only state that
matters is the newest. So a put commits the checkpoint together with a *due marker* (a row
of namespace ``DUE``, keyed by thread and checkpoint id) and returns; the copy is made
``delay`` seconds later, once for every put of the thread in between, from the newest
checkpoint the store holds then. Only the first put of such a window writes a marker
(``HistoryCopies.window``); the copy deletes the markers it owns in the batch that writes
its record.

Nothing acknowledged is lost on the way:

- the markers are durable, so the first put of any later saver (any process) makes the
  copies a stopped or killed process still owed (``recover``);
- ``flush`` makes every owed copy now: ``AalisSaver.aflush``, the host's stop (the plugin in
  ``_clearing.py`` flushes every saver of its loop before the memory provider stops) and a
  clear or a forget (before they delete, so a late copy never brings a cleared message back);
- a copy that fails keeps its markers, is logged, and is raised by the next ``flush``.

This module imports no LangGraph: the clear plugin, which loads in every host, uses it.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from aalis_api_memory import Person

_log = logging.getLogger("aalis_langgraph")

#: The metadata namespace of the due markers: key ``entry_key(thread_id, checkpoint_id)``.
DUE = "langgraph-copies-due"

#: Makes one thread's copy: ``(thread_id, person or None, the checkpoint ids its markers
#: are keyed by)``.
CopyOne = Callable[[str, Person | None, Sequence[str]], Awaitable[None]]

#: Every saver's copies, so that a clear, a forget or the host's stop can flush them.
_LIVE: weakref.WeakSet[HistoryCopies] = weakref.WeakSet()


@dataclass
class _Owed:
    """The copy one thread is owed, for a window of puts: the due markers it owns (the
    checkpoint ids they are keyed by) and who spoke in the newest put."""

    markers: list[str]
    person: Person | None
    timer: asyncio.TimerHandle | None = None
    #: The delay ran out while a copy of the thread was still running: go on after it.
    ready: bool = False


#: What a put holds between its decision and its commit: the window it joins (whose
#: marker is already committed), or None when the put writes a marker of its own.
Window = _Owed | None


class HistoryCopies:
    """One saver's owed copies, made ``delay`` seconds after the first put that owes one.

    Lives on the loop the saver's puts run on (the host's); every method but ``owes`` runs
    there too.
    """

    def __init__(self, copy_one: CopyOne, delay: float) -> None:
        self._copy_one = copy_one
        self._delay = delay
        self._owed: dict[str, _Owed] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._failures: dict[str, BaseException] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        _LIVE.add(self)

    def owes(self, thread_id: str) -> bool:
        return thread_id in self._owed or thread_id in self._running

    def owed_person(self, thread_id: str) -> Person | None:
        owed = self._owed.get(thread_id)
        return owed.person if owed is not None else None

    def window(self, thread_id: str) -> Window:
        """The window a put of ``thread_id`` joins, or None: then the put commits a due
        marker of its own (keyed by its checkpoint id) with its checkpoint.

        Only the first put of a window writes a marker: a window exists only once a put
        that wrote one has committed, and its copy deletes exactly the markers it owns,
        so every owed copy has a durable marker, and a marker is never deleted by a copy
        that did not cover its put, whatever order the store applies commits in.
        """
        return self._owed.get(thread_id)

    def join(
        self, thread_id: str, cid: str, person: Person | None, window: Window, marked: bool
    ) -> bool:
        """Owe ``thread_id`` a copy for checkpoint ``cid``, committed with a marker
        (``marked``) or in ``window``. False when ``window``'s copy started while the put
        committed: the put is then covered by no marker, and writes one, then joins again
        ``marked``."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        owed = self._owed.get(thread_id)
        if not marked and (owed is None or owed is not window):
            return False
        if owed is None:
            owed = self._owed[thread_id] = _Owed([], person)
            owed.timer = loop.call_later(self._delay, self._due, thread_id)
        if marked:
            owed.markers.append(cid)
        if person is not None:
            owed.person = person
        return True

    def _due(self, thread_id: str) -> None:
        owed = self._owed.get(thread_id)
        if owed is None:
            return
        owed.timer = None
        owed.ready = True
        if thread_id not in self._running:
            self._start(thread_id)

    def _start(self, thread_id: str) -> None:
        owed = self._owed.pop(thread_id)
        if owed.timer is not None:
            owed.timer.cancel()
        task = asyncio.get_running_loop().create_task(self._make(thread_id, owed))
        self._running[thread_id] = task

    async def _make(self, thread_id: str, owed: _Owed) -> None:
        try:
            await self._copy_one(thread_id, owed.person, owed.markers)
        except Exception as exc:
            self._failures.setdefault(thread_id, exc)
            _log.error(
                "thread %r: the history copy failed (%s: %s); the checkpoints are kept and "
                "the copy is owed until a later put or flush makes it",
                thread_id,
                type(exc).__name__,
                exc,
            )
        finally:
            del self._running[thread_id]
            after = self._owed.get(thread_id)
            if after is not None and after.ready:
                self._start(thread_id)

    async def flush(self, thread_id: str | None = None) -> None:
        """Make the owed copies now (one thread's, or all) and wait for them; raise the
        first failure since the last flush."""
        threads = [thread_id] if thread_id is not None else [*self._owed, *self._running]
        for thread in dict.fromkeys(threads):
            while True:
                running = self._running.get(thread)
                if running is not None:
                    await asyncio.wait({running})
                elif thread in self._owed:
                    self._start(thread)
                else:
                    break
        failed = [self._failures.pop(t) for t in threads if t in self._failures]
        if thread_id is None:
            failed += list(self._failures.values())
            self._failures.clear()
        if failed:
            raise failed[0]

    def on_this_loop(self) -> bool:
        try:
            return self._loop is asyncio.get_running_loop()
        except RuntimeError:
            return False


async def flush_everywhere() -> None:
    """Flush every saver's copies that live on this loop (a clear, a forget, a stop).

    A failed copy is logged where it failed; here it stops nothing."""
    for copies in list(_LIVE):
        if copies.on_this_loop():
            try:
                await copies.flush()
            except Exception:  # already logged by the copy itself
                continue


__all__ = ["DUE", "HistoryCopies", "Window", "flush_everywhere"]
