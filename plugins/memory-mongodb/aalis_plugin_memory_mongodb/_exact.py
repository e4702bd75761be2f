"""Exact archiving on MongoDB: a snapshot with identities, and an archive that checks them.

The contract is ``aalis_api_memory._exact`` (docs/reference/memory-contract.md, "Exact
archiving"). Without multi-document transactions the commit is a sequence of single-document
atomic steps, ordered so that a crash or a concurrent writer at any point leaves a state the
caller can recognise: the guard entry is compared and set first (its ``rev`` changes on every
write, so a compare-and-set cannot be fooled by a delete and re-create), then the messages are
archived by ``_id``; when some of them vanished meanwhile the archive is undone and the entry
set back, and when the archive itself fails the entry keeps the new data. Snapshot ids are
message ids (the documents' ``_id``, as text; identity.py). (``find`` rather than
``count_documents`` with an ``_id`` filter: nx-27017 counts 0.)
"""

from __future__ import annotations

from aalis_api_memory import ArchiveConflict, ExactCommit, HistorySnapshot, same_entry
from pymongo.errors import DuplicateKeyError

from aalis_plugin_memory_mongodb._base import ORDER, Document
from aalis_plugin_memory_mongodb._codec import encode_document, escape_str, id_of, message_document
from aalis_plugin_memory_mongodb._identity import MongoIdentity, id_keys
from aalis_plugin_memory_mongodb._metadata import MongoMetadata


class MongoExact(MongoIdentity, MongoMetadata):
    """The ``ExactArchiving`` storage methods (a mixin of ``MongoMemory``)."""

    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        docs = await self._find(
            {"session_id": escape_str(session_id), "archived": False}, sort=ORDER
        )
        return HistorySnapshot(
            tuple(self._decode(doc) for doc in docs), tuple(id_of(doc["_id"]) for doc in docs)
        )

    async def _archive_exact(self, session_id: str, commit: ExactCommit) -> int:
        guard, marker = commit.guard, commit.marker
        marker_doc: Document | None = None
        if marker is not None:
            marker_doc = message_document(
                session_id, marker.message, marker.timestamp, archived=False
            )
            encode_document(marker_doc, "marker")
            await self._refuse_stored_ids([marker_doc["_id"]], every=True)
        entry = self._metadata_document(guard.namespace, guard.key, guard.text, commit.updated_at)
        new_rev = entry["rev"]
        sid = escape_str(session_id)
        # Snapshot ids are message ids (the documents' ``_id``, as text; see identity.py).
        wanted = len(set(commit.ids))
        oids = id_keys(commit.ids)
        flt = self._metadata_filter(guard.namespace, guard.key)

        current = await self._metadata.find_one(flt)
        stored = None if current is None else self._read_data(current)
        if not same_entry(stored, guard.expected):
            raise ArchiveConflict("guard", "the guard entry changed since the snapshot")
        active: Document = {"_id": {"$in": oids}, "session_id": sid, "archived": False}
        if oids and len(await self._find(active, sort=ORDER, projection={"_id": 1})) != wanted:
            raise ArchiveConflict("messages", "a message of the snapshot is no longer active")
        if current is None:
            try:
                await self._metadata.insert_one(entry)
            except DuplicateKeyError:
                raise ArchiveConflict("guard", "the guard entry was written meanwhile") from None
        else:
            result = await self._metadata.replace_one({**flt, "rev": current.get("rev")}, entry)
            if result.matched_count != 1:
                raise ArchiveConflict("guard", "the guard entry was written meanwhile")
        if self.after_guard is not None:
            await self.after_guard()
        archived = 0
        if oids:
            archived = (
                await self._messages.update_many(active, {"$set": {"archived": True}})
            ).modified_count
        if archived != wanted:
            # Some vanished (deleted or cleared): put back what this call archived and the
            # entry it replaced, so no message ends up archived under a summary set back.
            await self._messages.update_many(
                {"_id": {"$in": oids}, "session_id": sid}, {"$set": {"archived": False}}
            )
            await self._restore_guard(flt, new_rev, current)
            raise ArchiveConflict("messages", "a message of the snapshot vanished meanwhile")
        if marker_doc is not None:
            marker_doc["seq"] = await self._next_seq()
            await self._insert_one_checked(encode_document(marker_doc, "marker"))
            if oids and not await self._find(
                {"_id": {"$in": oids}}, sort=ORDER, limit=1, projection={"_id": 1}
            ):
                # The session was cleared between the archive and the marker.
                await self._messages.delete_one({"_id": marker_doc["_id"]})
        return archived

    async def _restore_guard(self, flt: Document, rev: str, previous: Document | None) -> None:
        """Set the guard entry back, unless someone (a clear) changed it after this call."""
        if previous is None:
            await self._metadata.delete_one({**flt, "rev": rev})
        else:
            await self._metadata.replace_one({**flt, "rev": rev}, previous)


__all__ = ["MongoExact"]
