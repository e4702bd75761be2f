"""Leases on MongoDB (the contract's ``Leases`` group, aalis_api_memory._leases).

A lease is a document of ``<prefix>leases``: ``{_id: <name>, holder, expires_at}``
(``expires_at`` in epoch ms). Taking one is ONE ``update_one`` with ``upsert=True`` on a filter
that admits only a lease this holder may take: ``{_id: name, $or: [{holder: holder},
{expires_at: {$lte: now}}]}``. When the lease is free, nothing matches and the upsert inserts
it; when another holder's unexpired lease exists, nothing matches either, and the upsert's
insert of the same ``_id`` fails with a duplicate key: that is the answer False. Two processes
racing for a free lease meet the same way at the ``_id`` index. No transaction is needed, so
it works on a standalone server, a replica set, a sharded cluster and the nx-27017
wire-protocol server the tests run.

The name and holder are only ever values (``_id`` and a field value), never operators or
field names. Expiry uses the caller's clock (epoch ms), passed down by ``WithLeases``: the
processes sharing a database are assumed to agree on the time within a small part of the ttl
(see aalis_api_memory._leases).
"""

from __future__ import annotations

import functools
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from aalis_plugin_memory_mongodb._base import MongoBase


class LeaseCollection:
    """The leases of one ``MongoMemory``, in ``collection``."""

    def __init__(self, collection: AsyncCollection[dict[str, Any]]) -> None:
        self.collection = collection

    async def acquire(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        takeable = {"_id": name, "$or": [{"holder": holder}, {"expires_at": {"$lte": now}}]}
        try:
            await self.collection.update_one(
                takeable, {"$set": {"holder": holder, "expires_at": now + ttl_ms}}, upsert=True
            )
        except DuplicateKeyError:  # another holder's unexpired lease (or a racing winner)
            return False
        return True

    async def release(self, name: str, holder: str) -> bool:
        result = await self.collection.delete_one({"_id": name, "holder": holder})
        return result.deleted_count == 1


class MongoLeases(MongoBase):
    """The ``Leases`` storage methods of ``MongoMemory`` (a mixin)."""

    @functools.cached_property
    def _leases(self) -> LeaseCollection:
        return LeaseCollection(self._lease_collection)

    async def _acquire_lease(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        return await self._leases.acquire(name, holder, ttl_ms, now)

    async def _release_lease(self, name: str, holder: str) -> bool:
        return await self._leases.release(name, holder)


__all__ = ["LeaseCollection", "MongoLeases"]
