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
from dataclasses import dataclass, field

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
    #: The delay ran out (or a flush asked): start as soon as nothing holds the window.
    ready: bool = False
    #: Puts that joined the window and have not committed yet: the copy waits for them,
    #: so it never deletes the window's marker before their checkpoints are in the store.
    inflight: int = 0
    idle: asyncio.Event = field(default_factory=asyncio.Event)


#: What a put holds between its decision and its commit: the window it joins (whose
#: marker is already committed), or None when the put writes a marker of its own.
Window = _Owed | None


class HistoryCopies:
    """One saver's owed copies, made ``delay`` seconds after the first put that owes one.

    Lives on the loop the saver's puts run on (the host's); every method runs there.
    """

    def __init__(self, copy_one: CopyOne, delay: float) -> None:
        self._copy_one = copy_one
        self._delay = delay
        self._owed: dict[str, _Owed] = {}
        self._running: dict[str, tuple[asyncio.Task[None], Person | None]] = {}
        self._failures: dict[str, BaseException] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        _LIVE.add(self)

    def owes(self, thread_id: str) -> bool:
        return thread_id in self._owed or thread_id in self._running

    def owed_person(self, thread_id: str) -> Person | None:
        """Who the copy owed or running for ``thread_id`` stamps (None: no copy, or none)."""
        owed = self._owed.get(thread_id)
        if owed is not None:
            return owed.person
        running = self._running.get(thread_id)
        return running[1] if running is not None else None

    def window(self, thread_id: str) -> Window:
        """The window a put of ``thread_id`` joins, held until ``join`` or ``release``;
        None when there is none: the put then commits a due marker of its own (keyed by
        its checkpoint id) with its checkpoint.

        Only the first put of a window writes a marker. A window exists only once a put
        that wrote one has committed, its copy waits for the puts that joined it, and it
        deletes exactly the markers it owns: every owed copy has a durable marker, and no
        copy deletes a marker it did not cover, whatever order the store applies commits in.
        """
        owed = self._owed.get(thread_id)
        if owed is not None:
            owed.inflight += 1
            owed.idle.clear()
        return owed

    def join(self, thread_id: str, cid: str, person: Person | None, window: Window) -> None:
        """Owe ``thread_id`` a copy for checkpoint ``cid``, now committed: in ``window``,
        or (None) in a window of its own whose marker the put committed."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        if window is not None:
            if person is not None:
                window.person = person
            self._arm(thread_id, window)  # a window owed again after a failure has no timer
            self._release(thread_id, window)
            return
        owed = self._owed.get(thread_id)
        if owed is None:
            owed = self._owed[thread_id] = _Owed([], person)
        owed.markers.append(cid)
        if person is not None:
            owed.person = person
        self._arm(thread_id, owed)

    def release(self, thread_id: str, window: Window) -> None:
        """A put that held ``window`` failed before its commit."""
        if window is not None:
            self._release(thread_id, window)

    def _release(self, thread_id: str, owed: _Owed) -> None:
        owed.inflight -= 1
        if owed.inflight == 0:
            owed.idle.set()
            if owed.ready and self._owed.get(thread_id) is owed:
                self._maybe_start(thread_id)

    def _arm(self, thread_id: str, owed: _Owed) -> None:
        if owed.timer is None and not owed.ready and self._loop is not None:
            owed.timer = self._loop.call_later(self._delay, self._due, thread_id)

    def _due(self, thread_id: str) -> None:
        owed = self._owed.get(thread_id)
        if owed is None:
            return
        owed.timer = None
        owed.ready = True
        self._maybe_start(thread_id)

    def _maybe_start(self, thread_id: str) -> None:
        owed = self._owed.get(thread_id)
        if owed is not None and owed.inflight == 0 and thread_id not in self._running:
            self._start(thread_id)

    def _start(self, thread_id: str) -> None:
        owed = self._owed.pop(thread_id)
        if owed.timer is not None:
            owed.timer.cancel()
        # The task runs in a copy of the caller's context: started from inside a clear's
        # or a forget's hold (``flush(here=True)``), its writes pass that hold.
        task = asyncio.get_running_loop().create_task(self._make(thread_id, owed))
        self._running[thread_id] = (task, owed.person)

    def _owe_again(self, thread_id: str, owed: _Owed) -> None:
        """A copy that failed or was cancelled: its markers are still in the store, so its
        window is owed again, made by the thread's next copy (a later put's or a flush)."""
        later = self._owed.get(thread_id)
        if later is None:
            self._owed[thread_id] = _Owed(list(owed.markers), owed.person)
        else:
            later.markers[:0] = owed.markers
            if later.person is None:
                later.person = owed.person

    async def _make(self, thread_id: str, owed: _Owed) -> None:
        try:
            await self._copy_one(thread_id, owed.person, owed.markers)
        except asyncio.CancelledError:
            self._owe_again(thread_id, owed)
            raise
        except Exception as exc:
            self._failures.setdefault(thread_id, exc)
            self._owe_again(thread_id, owed)
            _log.error(
                "thread %r: the history copy failed (%s: %s); the checkpoints are kept, and "
                "the thread's next copy (a later put's, or aflush) tries again",
                thread_id,
                type(exc).__name__,
                exc,
            )
        finally:
            del self._running[thread_id]
            after = self._owed.get(thread_id)
            if after is not None and after.ready:
                self._maybe_start(thread_id)

    async def flush(
        self, thread_id: str | None = None, *, keep_failures: bool = False, here: bool = False
    ) -> None:
        """Make the owed copies now (one thread's, or all) and wait for them, one attempt
        each; raise the first failure since the last flush (``keep_failures``: leave them
        for the user's ``aflush``). ``here``: called from inside a clear's or a forget's
        hold, where a copy started outside would wait for the hold while the hold waits for
        it; such a copy is cancelled (its markers stay) and made again from here."""
        threads = [thread_id] if thread_id is not None else [*self._owed, *self._running]
        for thread in dict.fromkeys(threads):
            tried = False
            while True:
                running = self._running.get(thread)
                owed = self._owed.get(thread)
                if running is not None:
                    if here and not tried:
                        running[0].cancel()
                    await asyncio.wait({running[0]})
                elif owed is not None and owed.inflight:
                    await owed.idle.wait()
                elif owed is not None and not tried:
                    tried = True
                    self._start(thread)
                else:
                    break
        if keep_failures:
            return
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


def owned_elsewhere(copies: HistoryCopies, thread_id: str) -> bool:
    """Whether another saver of this process owes ``thread_id`` a copy (its markers are
    that saver's to delete: a recovery leaves them alone)."""
    return any(other is not copies and other.owes(thread_id) for other in list(_LIVE))


async def flush_everywhere(*, here: bool = False) -> None:
    """Flush every saver's copies that live on this loop (a clear, a forget, a stop, a
    read of the context). Failures are logged where they happen and left for the savers'
    own ``aflush``; ``here`` as in ``HistoryCopies.flush``."""
    for copies in list(_LIVE):
        if copies.on_this_loop():
            await copies.flush(keep_failures=True, here=here)


__all__ = ["DUE", "HistoryCopies", "Window", "flush_everywhere", "owned_elsewhere"]
