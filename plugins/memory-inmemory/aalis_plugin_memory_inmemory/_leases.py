"""Leases of the in-memory store (the contract's ``Leases`` group, aalis_api_memory._leases).

A dict of ``name -> (holder, expires_at)``; each call runs without an ``await``, so it is one
atomic step on the event loop. Expiry uses the caller's clock (epoch ms) passed down by
``WithLeases``. Nothing survives the process, like everything else in this store.
"""

from __future__ import annotations

import functools

from aalis_plugin_memory_inmemory._base import InMemoryBase


class LeaseTable:
    """The leases of one ``InMemoryMemory``."""

    def __init__(self) -> None:
        self._leases: dict[str, tuple[str, int]] = {}

    def acquire(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        current = self._leases.get(name)
        if current is not None and current[0] != holder and current[1] > now:
            return False
        self._leases[name] = (holder, now + ttl_ms)
        return True

    def release(self, name: str, holder: str) -> bool:
        current = self._leases.get(name)
        if current is None or current[0] != holder:
            return False
        del self._leases[name]
        return True


class InMemoryLeases(InMemoryBase):
    """The ``Leases`` storage methods (a mixin of ``InMemoryMemory``)."""

    @functools.cached_property
    def _leases(self) -> LeaseTable:
        return LeaseTable()

    async def _acquire_lease(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        return self._leases.acquire(name, holder, ttl_ms, now)

    async def _release_lease(self, name: str, holder: str) -> bool:
        return self._leases.release(name, holder)


__all__ = ["InMemoryLeases", "LeaseTable"]
