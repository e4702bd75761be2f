"""What the job modules of ``MongoMemory`` share: the collections, the order, the counter.

``MongoBase`` holds the store's state (the client, the four collections, the query caps, the
logger, the metadata batch lock, the crash-test seam) and the helpers several jobs use: the
insertion sequence (``_next_seq``), decoding a document (``_decode``) and a sorted, limited
``find`` (``_find``). Each job of the contract is a mixin over it (``history.py``,
``queries.py``, ``identity.py``, ``transfer.py``, ``exact.py``, ``metadata.py``,
``leases.py``); ``store.py`` assembles them and connects. The layout is the same in every
memory backend (docs/backends/implementing.md, "One layout for every backend").
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aalis_api_memory import (
    DEFAULT_CROSS_SESSION_MAX_LIMIT,
    DEFAULT_RANGE_QUERY_LIMIT,
    CompleteMemoryBackend,
    Limit,
)
from aalis_schema_message import CONTROL_KINDS, Message
from pymongo import ASCENDING, DESCENDING, AsyncMongoClient, ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from aalis_core import get_logger
from aalis_plugin_memory_mongodb._codec import StoredDataError, document_message, escape_str
from aalis_plugin_memory_mongodb._config import MongoConfig
from aalis_plugin_memory_mongodb._locking import ReadWriteLock

Document = dict[str, Any]

#: A session's order, oldest first, and newest first.
ORDER = [("timestamp", ASCENDING), ("seq", ASCENDING)]
REVERSE = [("timestamp", DESCENDING), ("seq", DESCENDING)]
#: The control kinds as stored (escaped), to tell markers from conversation.
CONTROL = [escape_str(kind) for kind in sorted(CONTROL_KINDS)]
_COUNTER_ID = "messages"


def find_limit(limit: Limit) -> int:
    """A finite limit as pymongo wants it (0 there means "no limit", so callers handle 0)."""
    return 0 if limit == math.inf else int(limit)


class MongoBase(CompleteMemoryBackend):
    """The state and shared helpers of ``MongoMemory`` (its job mixins build on it)."""

    def __init__(
        self,
        client: AsyncMongoClient[Document],
        *,
        database: str = "aalis",
        collection_prefix: str = "aalis_",
        range_query_limit: int = DEFAULT_RANGE_QUERY_LIMIT,
        cross_session_max_limit: int = DEFAULT_CROSS_SESSION_MAX_LIMIT,
        logger: Any = None,
        owns_client: bool = False,
    ) -> None:
        config = MongoConfig(  # validates names and limits the same way as aalis.toml
            database=database,
            collection_prefix=collection_prefix,
            range_query_limit=range_query_limit,
            cross_session_max_limit=cross_session_max_limit,
        )
        self._client = client
        self._owns_client = owns_client
        db = client[config.database]
        self._messages: AsyncCollection[Document] = db[f"{config.collection_prefix}messages"]
        self._metadata: AsyncCollection[Document] = db[f"{config.collection_prefix}metadata"]
        self._counters: AsyncCollection[Document] = db[f"{config.collection_prefix}counters"]
        self._lease_collection: AsyncCollection[Document] = db[f"{config.collection_prefix}leases"]
        #: The caps of the two bounded queries (the conformance kit reads them).
        self.range_query_limit = config.range_query_limit
        self.cross_session_max_limit = config.cross_session_max_limit
        self._log = logger if logger is not None else get_logger("memory-mongodb")
        # Metadata reads through this store never see a commit_metadata batch half-applied.
        self._batch_lock = ReadWriteLock()
        #: Test seam: awaited inside ``archive_exact`` after the guard entry is written and
        #: before the messages are archived (a crash test kills the process there).
        self.after_guard: Callable[[], Awaitable[None]] | None = None

    async def _next_seq(self, count: int = 1) -> int:
        """Reserve ``count`` sequence numbers; returns the last one of the block."""
        for attempt in range(3):
            try:
                doc = await self._counters.find_one_and_update(
                    {"_id": _COUNTER_ID},
                    {"$inc": {"seq": count}},
                    upsert=True,
                    return_document=ReturnDocument.AFTER,
                )
            except DuplicateKeyError:
                # Two first-ever upserts raced on a server that does not retry them itself.
                if attempt == 2:
                    raise
                continue
            if doc is None:  # pragma: no cover - upsert with AFTER always returns the document
                raise RuntimeError("the sequence counter returned nothing")
            return int(doc["seq"])
        raise AssertionError("unreachable")  # pragma: no cover

    def _decode(self, doc: Mapping[str, Any]) -> Message:
        try:
            return document_message(doc)
        except (StoredDataError, KeyError, TypeError, ValueError) as exc:
            raise StoredDataError(
                f"message document {doc.get('_id')!r} of collection {self._messages.name} is "
                f"unreadable: {exc}"
            ) from None

    async def _find(
        self,
        flt: Mapping[str, Any],
        *,
        sort: list[tuple[str, int]],
        limit: int = 0,
        projection: Mapping[str, Any] | None = None,
    ) -> list[Document]:
        cursor = self._messages.find(flt, projection, sort=sort, limit=limit)
        return await cursor.to_list()


__all__ = ["CONTROL", "ORDER", "REVERSE", "Document", "MongoBase", "find_limit"]
