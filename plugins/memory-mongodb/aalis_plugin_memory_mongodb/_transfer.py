"""Listing, exporting and importing whole sessions on MongoDB (``aalis export``/``migrate``).

The contract's ``WithTransfer`` group (aalis_api_memory._backend), and the document size check
``aalis migrate`` runs before it writes (``message_bytes``). With no transaction, an import
checks every id before it writes anything and takes back what it inserted when another writer
stored one of them meanwhile (identity.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import bson
from aalis_api_memory import ImportRecord, SessionInfo, StoredMessage, identified
from aalis_schema_message import Message, now_ms

from aalis_plugin_memory_mongodb._base import ORDER
from aalis_plugin_memory_mongodb._codec import (
    MAX_DOCUMENT_BYTES,
    encode_document,
    escape_str,
    message_document,
    unescape_str,
)
from aalis_plugin_memory_mongodb._identity import MongoIdentity

#: A sequence number no store reaches (an int64, as the real ones), for sizing a document.
_UNBOUNDED = 2**62


class MongoTransfer(MongoIdentity):
    """The transfer storage methods (a mixin of ``MongoMemory``)."""

    async def _list_sessions(self) -> list[SessionInfo]:
        # No caller value enters this pipeline; "$session_id" etc. are our own field paths.
        # Booleans are compared with $eq rather than used as a $cond condition: some wire
        # servers (nx-27017) refuse a bare field path there.
        cursor = await self._messages.aggregate(
            [
                {
                    "$group": {
                        "_id": "$session_id",
                        "total": {"$sum": 1},
                        "archived": {"$sum": {"$cond": [{"$eq": ["$archived", True]}, 1, 0]}},
                        "last": {"$max": "$timestamp"},
                    }
                }
            ]
        )
        infos = []
        async for row in cursor:
            archived = int(row["archived"])
            last = row.get("last")
            infos.append(
                SessionInfo(
                    session_id=unescape_str(row["_id"]),
                    active=int(row["total"]) - archived,
                    archived=archived,
                    last_timestamp=None if last is None else int(last),
                )
            )
        infos.sort(key=lambda info: (-(info.last_timestamp or 0), info.session_id))
        return infos

    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        docs = await self._find({"session_id": escape_str(session_id)}, sort=ORDER)
        return [StoredMessage(self._decode(doc), bool(doc.get("archived"))) for doc in docs]

    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        docs = [
            message_document(session_id, record.message, record.timestamp, record.archived)
            for record in records
        ]
        # No transaction: every id is checked before anything is written.
        await self._refuse_stored_ids([doc["_id"] for doc in docs], every=True)
        last = await self._next_seq(len(docs))
        encoded = []
        for offset, doc in enumerate(docs):
            doc["seq"] = last - len(docs) + 1 + offset
            encoded.append(encode_document(doc, "message"))
        await self._insert_checked(encoded, [doc["_id"] for doc in docs])
        return len(encoded)

    #: The largest message document MongoDB stores (16 MiB of BSON); ``aalis migrate``
    #: checks every message against it before writing, so an oversize one is named up
    #: front instead of failing half-way (docs/host/export-import.md).
    max_message_bytes = MAX_DOCUMENT_BYTES

    def message_bytes(self, session_id: str, message: Message) -> int:
        """Size in bytes of the document ``message`` would be stored as (BSON)."""
        timestamp = message.timestamp if message.timestamp is not None else now_ms()
        # An id as long as a new one when the message has none yet (it gets one at save).
        doc = message_document(session_id, identified(message), timestamp, archived=False)
        doc["seq"] = _UNBOUNDED  # an int64 field, as the real sequence number
        try:
            return len(bson.encode(doc))
        except (bson.errors.InvalidDocument, OverflowError, UnicodeEncodeError) as exc:
            raise ValueError(f"message cannot be stored in MongoDB: {exc}") from None


__all__ = ["MongoTransfer"]
