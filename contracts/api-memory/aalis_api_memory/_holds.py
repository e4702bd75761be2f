"""Session holds: the adapter the ``memory`` capability wraps every provider in.

A clear runs a chain of middleware before (and after) the history is removed. A message saved
to that session meanwhile must neither be wiped by the clear nor slip in between two plugins'
clears, so ``run_clear`` *holds* the sessions: a ``save_message`` (or ``import_messages``) to a
held session waits until the hold ends and then lands. Nothing said during a clear is lost.

The adapter sits around the provider instance itself (``Capability(adapter=...)``), so every
consumer bound to that provider shares the same holds, whichever plugin started the clear.
Everything else is delegated unchanged, so ``supports(handle.use, FullHistory)`` still
tells whether the backend has an optional group. ``Holding`` is the adapter's own addition,
detected the same way (a consumer may be handed a store that is not wrapped).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, runtime_checkable

from aalis_schema_message import Message

from aalis_api_memory._validation import check_message, check_session_id


@runtime_checkable
class Holding(Protocol):
    """What the adapter adds to a store: holding sessions against writes during a clear."""

    def hold(self, session_ids: Iterable[str] | None = None) -> AbstractAsyncContextManager[None]:
        """Hold ``session_ids`` (every session when None) for the duration of the block."""
        ...


R = TypeVar("R")

#: Writes that add messages and therefore wait for a hold on their session.
HELD_WRITES: frozenset[str] = frozenset({"save_message", "import_messages"})


class _Hold:
    """One active hold: the sessions it covers (None: every session)."""

    __slots__ = ("session_ids",)

    def __init__(self, session_ids: frozenset[str] | None) -> None:
        self.session_ids = session_ids

    def covers(self, session_id: str) -> bool:
        return self.session_ids is None or session_id in self.session_ids


#: The holds entered in the current context. A write made from inside a hold (the clear's
#: own middleware, and any task it starts: ``wait_for``, ``gather``, a ``TaskGroup``) is
#: part of the clear and passes: waiting for its own hold would deadlock.
_OWN_HOLDS: ContextVar[frozenset[_Hold]] = ContextVar("aalis_own_memory_holds", default=frozenset())


class HeldMemory:
    """A ``MemoryService`` that delegates to ``inner`` and can hold sessions against writes.

    Holds nest and overlap (two clears of one session, or a clear of everything during a
    clear of one session); a session is free once every hold covering it has ended. A hold
    also waits for writes to its sessions that were already under way, so the code inside
    the hold sees a settled session. Writes made from inside the hold (the clear's own
    middleware, and tasks it starts) are not held back by it; every other write is.
    """

    def __init__(self, inner: Any) -> None:
        if isinstance(inner, HeldMemory):
            inner = inner.inner
        self._inner = inner
        self._holds: list[_Hold] = []
        self._writing: Counter[str] = Counter()
        self._changed: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def inner(self) -> Any:
        """The backend instance the provider registered."""
        return self._inner

    def __getattr__(self, name: str) -> Any:
        # Only called for names not found on the adapter: everything the backend has,
        # optional methods included, and nothing it lacks.
        if name.startswith("__") or name == "_inner":
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if name in HELD_WRITES and callable(value):
            return self._held_write(value)
        return value

    def __repr__(self) -> str:
        return f"HeldMemory({self._inner!r})"

    # -- holds ----------------------------------------------------------------------------

    def _condition(self) -> asyncio.Condition:
        # asyncio primitives belong to one loop; a store may outlive a loop (tests, CLI
        # commands each running their own), and holds never span loops, so start afresh.
        loop = asyncio.get_running_loop()
        if self._changed is None or self._loop is not loop:
            self._changed = asyncio.Condition()
            self._loop = loop
        return self._changed

    def is_held(self, session_id: str) -> bool:
        """True while any hold covers ``session_id``."""
        return any(hold.covers(session_id) for hold in self._holds)

    def _blocked(self, session_id: str) -> bool:
        own = _OWN_HOLDS.get()
        return any(hold.covers(session_id) and hold not in own for hold in self._holds)

    @asynccontextmanager
    async def hold(self, session_ids: Iterable[str] | None = None) -> AsyncIterator[None]:
        """Hold ``session_ids`` (every session when None) for the duration of the block.

        Entering waits for writes to those sessions that already started; writes issued
        from outside the block while it runs wait and land after it.
        """
        if isinstance(session_ids, (str, bytes)):
            raise TypeError("session_ids must be an iterable of str or None, not a single string")
        ids = None if session_ids is None else frozenset(check_session_id(s) for s in session_ids)
        hold = _Hold(ids)
        changed = self._condition()
        async with changed:
            self._holds.append(hold)
        token = _OWN_HOLDS.set(_OWN_HOLDS.get() | {hold})
        try:
            async with changed:
                await changed.wait_for(lambda: self._settled(hold))
            yield
        finally:
            _OWN_HOLDS.reset(token)
            async with changed:
                self._holds.remove(hold)
                changed.notify_all()

    def _settled(self, hold: _Hold) -> bool:
        return not any(count > 0 and hold.covers(sid) for sid, count in self._writing.items())

    async def _wait_and_write(self, session_id: str, write: Callable[[], Awaitable[R]]) -> R:
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: not self._blocked(session_id))
            self._writing[session_id] += 1
        try:
            return await write()
        finally:
            async with changed:
                self._writing[session_id] -= 1
                if self._writing[session_id] <= 0:
                    del self._writing[session_id]
                changed.notify_all()

    # -- writes that wait -----------------------------------------------------------------

    async def save_message(self, session_id: str, message: Message) -> None:
        """Append ``message``; waits while ``session_id`` is held, then lands.

        Arguments are checked first, so bad input fails at once rather than after a hold.
        """
        check_session_id(session_id)
        check_message(message)
        inner = self._inner
        await self._wait_and_write(session_id, lambda: inner.save_message(session_id, message))

    def _held_write(self, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def write(session_id: str, *args: Any, **kwargs: Any) -> Any:
            check_session_id(session_id)
            return await self._wait_and_write(
                session_id, lambda: method(session_id, *args, **kwargs)
            )

        write.__name__ = method.__name__
        write.__doc__ = method.__doc__
        return write


__all__ = ["HELD_WRITES", "HeldMemory", "Holding"]
