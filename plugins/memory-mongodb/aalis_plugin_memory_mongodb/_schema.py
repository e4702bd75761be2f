"""The collections' indexes: one per query shape, created at every connect (idempotent).

MongoDB has no schema to migrate: a document carries its fields, and a field this version does
not know is ignored (see ``codec.py``). What the store needs from the server is its indexes;
``create_indexes`` makes them, and creating an index that exists is a no-op, so two processes
connecting at once are harmless.
"""

from __future__ import annotations

from typing import Any

from pymongo import ASCENDING
from pymongo.asynchronous.collection import AsyncCollection

from aalis_plugin_memory_mongodb._base import ORDER

Document = dict[str, Any]


async def create_indexes(
    messages: AsyncCollection[Document], metadata: AsyncCollection[Document]
) -> None:
    """Create the indexes of ``messages`` and ``metadata``.

    * ``(session_id, archived, timestamp, seq)``: get_history, count_history, archive_span;
    * ``(session_id, timestamp, seq)``: full history, ranges, export, rewrites, deletes;
    * ``(archived, timestamp, seq)``: the cross-session query;
    * ``(platform, archived, timestamp, seq)``: the same filtered by platform;
    * ``_id`` (every collection has it, unique): the message id (identity.py);
    * metadata ``(namespace, key)`` unique: one entry per key, lookups and listings.
    """
    await messages.create_index(
        [("session_id", ASCENDING), ("archived", ASCENDING), *ORDER],
        name="session_active_order",
    )
    await messages.create_index([("session_id", ASCENDING), *ORDER], name="session_order")
    await messages.create_index([("archived", ASCENDING), *ORDER], name="recent_order")
    await messages.create_index(
        [("platform", ASCENDING), ("archived", ASCENDING), *ORDER], name="platform_order"
    )
    await metadata.create_index(
        [("namespace", ASCENDING), ("key", ASCENDING)], name="namespace_key", unique=True
    )


__all__ = ["create_indexes"]
