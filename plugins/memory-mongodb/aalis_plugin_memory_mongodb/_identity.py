"""Message ids on MongoDB: the documents' ``_id``, older messages, lookups by id.

The rules are in docs/reference/memory-contract.md ("Message identity"); how this store keeps
them is in docs/backends/mongodb.md ("Message ids"). In short:

* A message's id is its document's ``_id``. Every MongoDB server (nx-27017 included, which
  enforces no other unique index) refuses a second document with a stored ``_id``
  (``DuplicateKeyError``, raised here as ``MessageIdConflict``), whichever process or host
  writes it, at no cost to a save: no extra index, no extra round trip.
* A document written before ids existed has an ObjectId ``_id``; it reads with that as text
  (``codec.id_of``), the same on every read, and is found and deleted by that id. Nothing
  is written to give it one. A string ``_id`` of the same 24 hex digits would be another key
  to MongoDB, so an id of that shape (never one ``new_message_id`` makes) costs one look-up
  before it is stored.
* An import checks its ids before it writes anything (no multi-document transactions here);
  if another writer stores one of them in between, the documents this import had inserted
  are deleted again before ``MessageIdConflict`` is raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aalis_api_memory import MessageIdConflict, StoredRecord
from pymongo.errors import BulkWriteError, DuplicateKeyError

from aalis_plugin_memory_mongodb._base import MongoBase
from aalis_plugin_memory_mongodb._codec import derived_object_id, escape_str, unescape_str

Document = dict[str, Any]

#: Ids per look-up when an import checks its batch: a bounded ``$in``, far below 16 MiB.
_CHECK_CHUNK = 10_000
#: MongoDB's error code of a duplicate key.
_DUPLICATE_KEY = 11000


def id_keys(ids: Sequence[str]) -> list[Any]:
    """The ``_id`` values of the messages with these ids: each id, and for an id of an older
    message's shape, its ObjectId too."""
    keys: list[Any] = list(ids)
    keys.extend(oid for oid in map(derived_object_id, ids) if oid is not None)
    return keys


def id_filter(ids: Sequence[str]) -> Document:
    """The messages whose id is among ``ids``."""
    return {"_id": {"$in": id_keys(ids)}}


def conflict(what: str) -> MessageIdConflict:
    return MessageIdConflict(f"{what}: message ids are unique in the store; nothing was written")


def _failed_index(exc: BulkWriteError) -> int:
    errors = exc.details.get("writeErrors", [])
    return min((int(error.get("index", 0)) for error in errors), default=0)


def is_duplicate_id(exc: BulkWriteError) -> bool:
    errors = exc.details.get("writeErrors", [])
    return any(error.get("code") == _DUPLICATE_KEY for error in errors)


class MongoIdentity(MongoBase):
    """The ``MessagesById`` group and the id checks of the message writes (a mixin)."""

    async def _refuse_stored_ids(self, ids: Sequence[str], *, every: bool) -> None:
        """Raise ``MessageIdConflict`` when an id is repeated or already stored.

        ``every`` False looks up only the ids of older messages' shape: the ``_id`` index
        refuses every other stored id at the insert itself, without a round trip.
        """
        if len(set(ids)) != len(ids):
            raise conflict("the same message id is given twice")
        wanted = list(ids) if every else [i for i in ids if derived_object_id(i) is not None]
        for start in range(0, len(wanted), _CHECK_CHUNK):
            chunk = wanted[start : start + _CHECK_CHUNK]
            if await self._messages.find_one(id_filter(chunk), {"_id": 1}) is not None:
                raise conflict("a message id is already stored")

    async def _insert_checked(self, encoded: Sequence[Any], keys: Sequence[str]) -> None:
        """Insert an import's documents; on a duplicate id, take back what was inserted."""
        try:
            await self._messages.insert_many(encoded, ordered=True)
        except BulkWriteError as exc:
            if not is_duplicate_id(exc):
                raise
            # Only what this call inserted: the ids it checked were free a moment ago, and
            # nothing before the failing document in the ordered batch belonged to another.
            inserted = keys[: _failed_index(exc)]
            await self._messages.delete_many({"_id": {"$in": list(inserted)}})
            raise conflict("a message id was stored by another writer meanwhile") from None

    async def _insert_one_checked(self, encoded: Any) -> None:
        try:
            await self._messages.insert_one(encoded)
        except DuplicateKeyError:
            raise conflict("a message id is already stored") from None

    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        docs = await self._messages.find(id_filter(ids)).to_list()
        return [
            StoredRecord(
                session_id=unescape_str(doc["session_id"]),
                message=self._decode(doc),
                archived=bool(doc.get("archived")),  # some wire servers read booleans as 0/1
            )
            for doc in docs
        ]

    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        flt = {"session_id": escape_str(session_id), **id_filter(ids)}
        return (await self._messages.delete_many(flt)).deleted_count


__all__ = ["MongoIdentity", "conflict", "id_filter", "id_keys", "is_duplicate_id"]
