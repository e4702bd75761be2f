"""Leases held in the store: the optional ``Leases`` group (docs/reference/turn.md).

Two ``aalis chat`` processes (or any two ``run_turn`` callers) on one session must not
interleave: if A saves its question, B saves its own, and A's model is then asked, A's model
answers B's question and every later prompt shows the turns out of pairs. A lock inside one
process cannot see the other process; the one thing both share is the store. So the contract
has an optional group, ``Leases`` (``acquire_lease`` / ``release_lease``, declared beside the
other groups in ``aalis_api_memory._service``); the agent runtime's ``hold_turn`` holds
``turn:<session id>`` for the duration of a turn.

The rules every backend follows (the conformance kit checks them, ``testing/leases.py``):

* ``acquire_lease(name, holder, ttl_ms)`` takes the lease when nobody holds it, when the
  holder's lease has expired, or when ``holder`` itself holds it (then it renews: the new
  expiry is now + ``ttl_ms``); it answers False and changes nothing while another holder's
  lease is unexpired. The decision and the write are one atomic step across processes.
* ``release_lease(name, holder)`` removes the lease when ``holder`` holds it (expired or not)
  and answers True; otherwise False, nothing changed (a lease taken over after expiry is not
  someone else's to release).
* **Clock.** Expiry is wall-clock time: the store's own clock where it has one (PostgreSQL's
  ``clock_timestamp()``), else the caller's epoch milliseconds (``now_ms()``, passed down by
  ``WithLeases``). Processes that share a store through the caller's clock are assumed to
  agree within a small part of ``ttl_ms`` (one machine, or NTP-synchronised hosts); a clock
  ahead by more than the ttl can take a live lease over. The holder renews every ttl/3, so a
  skew below a third of the ttl never does.

"""

from __future__ import annotations

import os
import socket
import uuid
from abc import ABC, abstractmethod

from aalis_schema_message import now_ms

from aalis_api_memory._errors import AalisMemoryError
from aalis_api_memory._service import Leases

#: Longest lease name and holder accepted (both are stored as keys).
MAX_LEASE_KEY = 1024
#: Longest ttl accepted: a week. A lease is renewed while its work runs; a longer one would
#: only keep a crashed holder's lease alive (and overflow some stores' date arithmetic).
MAX_TTL_MS = 7 * 24 * 3600 * 1000


class LeaseWaitTimeout(AalisMemoryError):
    """``hold_turn`` waited its whole bound and another holder still had the lease."""


class LeaseFailed(AalisMemoryError):
    """The store could not answer ``acquire_lease`` (the cause is chained)."""


def check_lease_key(value: object, what: str) -> str:
    """A lease name or holder: a non-empty ``str`` of at most ``MAX_LEASE_KEY`` characters."""
    if not isinstance(value, str):
        raise TypeError(f"a lease {what} must be a str, got {type(value).__name__}")
    if not value or len(value) > MAX_LEASE_KEY:
        raise ValueError(f"a lease {what} must be 1 to {MAX_LEASE_KEY} characters")
    return value


def check_ttl_ms(value: object) -> int:
    """A lease's time to live: a positive ``int`` of milliseconds (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"ttl_ms must be an int (milliseconds), got {type(value).__name__}")
    if value <= 0 or value > MAX_TTL_MS:
        raise ValueError(f"ttl_ms must be 1 to {MAX_TTL_MS} milliseconds (a week), got {value}")
    return value


def turn_lease_name(session_id: str) -> str:
    return f"turn:{session_id}"


def new_holder() -> str:
    """A holder id no other turn anywhere uses: host, process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"


class WithLeases(ABC):
    """The ``Leases`` group\'s mixin for ``aalis_api_memory.MemoryBackend``: checks the
    arguments once for every backend (a bad name, holder or ttl raises before the store is
    touched) and passes the caller\'s clock down."""

    async def acquire_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        """Refuse a bad name, holder or ttl; pass the caller's clock (``now_ms()``) down."""
        checked = check_lease_key(name, "name"), check_lease_key(holder, "holder")
        return bool(await self._acquire_lease(*checked, check_ttl_ms(ttl_ms), now_ms()))

    async def release_lease(self, name: str, holder: str) -> bool:
        """Refuse a bad name or holder, then release (only ``holder``'s own lease)."""
        checked = check_lease_key(name, "name"), check_lease_key(holder, "holder")
        return bool(await self._release_lease(*checked))

    @abstractmethod
    async def _acquire_lease(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        """In one atomic step: when ``name`` is free, expired at ``now`` (epoch ms; a store
        with its own clock uses that instead) or held by ``holder``, set it to ``holder``
        until ``now + ttl_ms`` and return True; else change nothing and return False."""

    @abstractmethod
    async def _release_lease(self, name: str, holder: str) -> bool:
        """Remove ``name`` when ``holder`` holds it; whether it did."""


__all__ = [
    "MAX_LEASE_KEY",
    "MAX_TTL_MS",
    "LeaseFailed",
    "LeaseWaitTimeout",
    "Leases",
    "WithLeases",
    "check_lease_key",
    "check_ttl_ms",
    "new_holder",
    "turn_lease_name",
]
