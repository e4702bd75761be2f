"""The turn lease ``run_turn`` holds: one turn of a session at a time, across processes.

Two ``aalis chat`` processes (or any two ``run_turn`` callers) on one session must not
interleave: if A saves its question, B saves its own, and A's model is then asked, A's model
answers B's question and every later prompt shows the turns out of pairs. A lock inside one
process cannot see the other process; the one thing both share is the store, through the
memory contract's optional ``Leases`` group (docs/reference/turn.md). ``hold_turn`` holds
``turn:<session id>`` for the duration of a turn.

A store without the group still runs turns: ``hold_turn`` falls back to an ``asyncio.Lock``
per session in this process and logs once that it cannot order turns across processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aalis_api_memory import (
    LeaseFailed,
    Leases,
    LeaseWaitTimeout,
    MemoryService,
    new_holder,
    supports,
    turn_lease_name,
)

#: Milliseconds a turn lease lives without renewal: a crashed process's turn blocks the
#: session for at most this long.
TURN_LEASE_TTL_MS = 30_000


#: First and longest pause between two attempts of a waiting turn, in seconds.
POLL_FIRST_S = 0.02
POLL_MAX_S = 0.2

# -- the in-process fallback -------------------------------------------------------------

#: One lock per (event loop, session): an asyncio lock must not be shared across loops.
_LOCAL_LOCKS: dict[tuple[int, str], asyncio.Lock] = {}
_warned_stores: set[int] = set()


def _local_lock(session_id: str) -> asyncio.Lock:
    key = (id(asyncio.get_running_loop()), session_id)
    lock = _LOCAL_LOCKS.get(key)
    if lock is None:
        lock = _LOCAL_LOCKS[key] = asyncio.Lock()
    return lock


def _warn_once(memory: object, log: Any) -> None:
    key = id(type(memory))
    if key in _warned_stores or log is None:
        return
    _warned_stores.add(key)
    log.warning(
        "the memory store has no leases: turns are ordered within this process only, "
        "not across processes",
        store=type(memory).__name__,
    )


# -- holding the turn lease --------------------------------------------------------------


@contextlib.asynccontextmanager
async def hold_turn(
    memory: MemoryService,
    session_id: str,
    *,
    wait_s: float,
    ttl_ms: int = TURN_LEASE_TTL_MS,
    on_wait: Callable[[], Awaitable[None] | None] | None = None,
    log: Any = None,
) -> AsyncIterator[None]:
    """Hold the session's turn for the body: wait (polling) up to ``wait_s`` for it, renew
    it every ttl/3 while the body runs, give it up afterwards, whatever happened.

    ``on_wait`` is called once, when the first attempt finds the turn taken (the chat prints
    a line). Raises ``LeaseWaitTimeout`` when another holder kept it for the whole wait.
    """
    if not supports(memory, Leases):
        _warn_once(memory, log)
        lock = _local_lock(session_id)
        if lock.locked() and on_wait is not None:
            await _call(on_wait)
        try:
            async with asyncio.timeout(wait_s):
                await lock.acquire()
        except TimeoutError:
            raise LeaseWaitTimeout(
                f"another turn of session {session_id!r} kept it for {wait_s:g} s"
            ) from None
        try:
            yield
        finally:
            lock.release()
        return

    leases: Leases = memory
    name = turn_lease_name(session_id)
    holder = new_holder()
    deadline = time.monotonic() + wait_s
    pause = POLL_FIRST_S
    told = False
    while not await _try(leases, name, holder, ttl_ms):
        if not told:
            told = True
            if on_wait is not None:
                await _call(on_wait)
        left = deadline - time.monotonic()
        if left <= 0:
            raise LeaseWaitTimeout(
                f"another turn of session {session_id!r} kept it for {wait_s:g} s"
            )
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, POLL_MAX_S)
    renewer = asyncio.create_task(_renew(leases, name, holder, ttl_ms, log))
    try:
        yield
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer
        try:
            await asyncio.shield(leases.release_lease(name, holder))
        except Exception as exc:  # it expires by itself after ttl_ms
            if log is not None:
                log.warning("turn lease not released", session_id=session_id, error=str(exc))


async def _try(leases: Leases, name: str, holder: str, ttl_ms: int) -> bool:
    try:
        return bool(await leases.acquire_lease(name, holder, ttl_ms))
    except Exception as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise LeaseFailed(f"the turn lease {name!r} could not be taken: {text}") from exc


async def _renew(leases: Leases, name: str, holder: str, ttl_ms: int, log: Any) -> None:
    while True:
        await asyncio.sleep(ttl_ms / 3000)
        try:
            kept = await leases.acquire_lease(name, holder, ttl_ms)
        except Exception as exc:
            kept = False
            if log is not None:
                log.warning("turn lease not renewed", lease=name, error=str(exc))
        if not kept and log is not None:
            log.warning("turn lease lost while the turn was running", lease=name)


async def _call(fn: Callable[[], Awaitable[None] | None]) -> None:
    result = fn()
    if result is not None:
        await result


__all__ = ["TURN_LEASE_TTL_MS", "hold_turn"]
