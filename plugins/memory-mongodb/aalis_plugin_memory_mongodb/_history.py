"""The history methods of ``MongoMemory``: save, read, count, archive a span, clear.

The contract's ``MemoryBackend`` history group with ``WithFullHistory`` and ``WithClearAll``
(aalis_api_memory._backend). A save reserves its sequence number with one atomic ``$inc`` on the
counter document (``base.py``) and inserts one document; ``archive_span`` is one
``update_many``; reads are bounded by the limit, never by the session's length.
"""

from __future__ import annotations

import math

from aalis_api_memory import Limit
from aalis_schema_message import Message

from aalis_plugin_memory_mongodb._base import CONTROL, ORDER, REVERSE, Document, find_limit
from aalis_plugin_memory_mongodb._codec import encode_document, escape_str, message_document
from aalis_plugin_memory_mongodb._identity import MongoIdentity


class MongoHistory(MongoIdentity):
    """The history storage methods (a mixin of ``MongoMemory``)."""

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        doc = message_document(session_id, message, timestamp, archived=False)
        await self._refuse_stored_ids([doc["_id"]], every=False)
        doc["seq"] = await self._next_seq()
        await self._insert_one_checked(encode_document(doc, "message"))

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        count = limit
        active: Document = {"session_id": escape_str(session_id), "archived": False}
        if count == math.inf:
            return [self._decode(doc) for doc in await self._find(active, sort=ORDER)]
        # Read the active messages newest first and stop at the (limit+1)-th conversation
        # message. The read is bounded (limit + a margin for markers), so its cost grows with
        # the limit, never with the session; in the rare window with more markers than the
        # margin, it is repeated with a larger bound.
        fetch = int(count) + 17
        while True:
            docs = await self._find(active, sort=REVERSE, limit=fetch)
            window: list[Document] = []
            conversation = 0
            for doc in docs:
                if doc.get("kind") not in CONTROL:
                    conversation += 1
                    if conversation > count:
                        return [self._decode(kept) for kept in reversed(window)]
                window.append(doc)
            if len(docs) < fetch:  # the whole active history fits in the window
                return [self._decode(kept) for kept in reversed(window)]
            fetch *= 4

    async def _count_history(self, session_id: str) -> int:
        return await self._messages.count_documents(
            {"session_id": escape_str(session_id), "archived": False, "kind": {"$nin": CONTROL}}
        )

    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        docs = await self._find(
            {"session_id": escape_str(session_id)}, sort=REVERSE, limit=find_limit(limit)
        )
        return [self._decode(doc) for doc in reversed(docs)]

    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        sid = escape_str(session_id)
        docs = await self._find(
            {"session_id": sid, "archived": False},
            sort=ORDER,
            limit=find_limit(count),
            projection={"_id": 1},
        )
        ids = [doc["_id"] for position, doc in enumerate(docs) if position not in keep]
        if not ids:
            return 0
        result = await self._messages.update_many(
            {"_id": {"$in": ids}, "session_id": sid, "archived": False},
            {"$set": {"archived": True}},
        )
        return result.modified_count

    async def _clear_session(self, session_id: str) -> None:
        await self._messages.delete_many({"session_id": escape_str(session_id)})

    async def _clear_all(self) -> None:
        await self._messages.delete_many({})


__all__ = ["MongoHistory"]
