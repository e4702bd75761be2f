"""The cross-session reads and the rewrites of ``MongoMemory``.

The contract's ``WithCrossSession`` (a session's messages in a time range, the newest messages
across sessions) and ``WithRewrite`` (content replacement, deletes by timestamp) groups
(aalis_api_memory._backend). Caller values only ever appear as escaped values in filters
(``codec.escape_str``), never as field names or operators.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aalis_api_memory import Limit, RangeQuery, RecentMessageRecord, RecentQuery
from aalis_schema_message import Message
from pymongo import UpdateOne

from aalis_plugin_memory_mongodb._base import ORDER, REVERSE, Document, MongoBase, find_limit
from aalis_plugin_memory_mongodb._codec import escape_str, unescape_str


class MongoQueries(MongoBase):
    """The cross-session and rewrite storage methods (a mixin of ``MongoMemory``)."""

    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        flt: Document = {
            "session_id": escape_str(session_id),
            "timestamp": {"$gte": query.from_ts, "$lte": query.to_ts},
        }
        if query.roles:
            flt["role"] = {"$in": [escape_str(role) for role in query.roles]}
        if query.exclude_kinds:
            # $nin matches a missing/None kind, so kind-less messages are never excluded.
            flt["kind"] = {"$nin": [escape_str(kind) for kind in query.exclude_kinds]}
        docs = await self._find(flt, sort=ORDER, limit=self.range_query_limit)
        return [self._decode(doc) for doc in docs]

    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        flt: Document = {
            "archived": False,
            "role": {"$in": [escape_str(role) for role in query.roles]},
        }
        kind: Document = {}
        if query.kinds is not None:
            # A whitelist: it excludes kind-less messages.
            kind["$in"] = [escape_str(k) for k in query.kinds]
        if query.exclude_kinds:
            kind["$nin"] = [escape_str(k) for k in query.exclude_kinds]
        if kind:
            flt["kind"] = kind
        if query.since_ts is not None:
            flt["timestamp"] = {"$gte": query.since_ts}
        if query.platform is not None:
            flt["platform"] = escape_str(query.platform)
        if query.exclude_session_ids:
            flt["session_id"] = {"$nin": [escape_str(s) for s in query.exclude_session_ids]}
        docs = await self._find(flt, sort=REVERSE, limit=query.limit)
        return [
            RecentMessageRecord(unescape_str(doc["session_id"]), self._decode(doc))
            for doc in reversed(docs)
        ]

    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        sid = escape_str(session_id)
        # The whole body is projected: nested-path projections ("body.content") come back
        # flattened from some wire servers (nx-27017).
        docs = await self._find(
            {"session_id": sid},
            sort=REVERSE,
            limit=find_limit(recent_limit),
            projection={"body": 1},
        )
        updates = []
        for doc in docs:
            body = doc.get("body")
            content = body.get("content") if isinstance(body, Mapping) else None
            if isinstance(content, str) and old in content:
                updates.append(
                    UpdateOne(
                        {"_id": doc["_id"], "session_id": sid},
                        {"$set": {"body.content": content.replace(old, new)}},
                    )
                )
        if not updates:
            return 0
        await self._messages.bulk_write(updates, ordered=True)
        return len(updates)

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        result = await self._messages.delete_many(
            {"session_id": escape_str(session_id), "timestamp": {"$in": list(timestamps)}}
        )
        return result.deleted_count


__all__ = ["MongoQueries"]
