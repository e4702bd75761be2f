"""``MongoMemory``: the memory contract on MongoDB, through pymongo's asyncio API.

Layout (``<prefix>`` is ``collection_prefix``):

* ``<prefix>messages``: one document per message, ``{_id, session_id, seq, timestamp,
  archived, role, kind, platform, body}``; ``_id`` is the message id (unique in the store,
  identity.py), ``body`` the rest of ``Message.to_json()`` as real subdocuments (see
  ``codec``). A session's order is ``(timestamp, seq)``.
* ``<prefix>metadata``: one document per entry, ``{namespace, key, data, updated_at}``.
* ``<prefix>leases``: ``{_id: <lease name>, holder, expires_at}`` (``leases.py``).
* ``<prefix>counters``: ``{_id: "messages", seq}``, the insertion sequence. One
  ``find_one_and_update`` with ``$inc`` per save (per import batch) is atomic on every
  topology, so two processes saving at the same millisecond still get a strict order.

No method uses a multi-document transaction, so the store runs on a standalone server, a
replica set and a sharded cluster (messages sharded on ``session_id``; every per-session
operation carries ``session_id`` in its filter and is routed to one shard). Where the contract
asks for atomicity the store gets it from single operations: ``archive_span`` is one
``update_many``; ``commit_metadata`` encodes the whole batch to BSON first and sends one
ordered ``bulk_write``, so bad data applies nothing. Session ids, namespaces and keys only
ever appear as values in filters (never as field names or aggregation expressions), so a
``"$gt"`` is a string like any other.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import bson
from aalis_api_memory import (
    DEFAULT_CROSS_SESSION_MAX_LIMIT,
    DEFAULT_RANGE_QUERY_LIMIT,
    ArchiveConflict,
    BackendUnavailable,
    CompleteMemoryBackend,
    ExactCommit,
    HistorySnapshot,
    ImportRecord,
    Limit,
    RangeQuery,
    RecentMessageRecord,
    RecentQuery,
    SessionInfo,
    StoredMessage,
    identified,
    same_entry,
)
from aalis_schema_message import CONTROL_KINDS, Message, now_ms
from pymongo import (
    ASCENDING,
    DESCENDING,
    AsyncMongoClient,
    ReturnDocument,
    UpdateOne,
)
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError, PyMongoError

from aalis_core.logging import get_logger
from aalis_plugin_memory_mongodb.codec import (
    MAX_DOCUMENT_BYTES,
    StoredDataError,
    document_message,
    encode_document,
    escape_str,
    id_of,
    message_document,
    unescape_str,
)
from aalis_plugin_memory_mongodb.config import MongoConfig
from aalis_plugin_memory_mongodb.identity import MongoIdentity, id_keys
from aalis_plugin_memory_mongodb.leases import MongoLeaseMethods, MongoLeases
from aalis_plugin_memory_mongodb.locking import ReadWriteLock
from aalis_plugin_memory_mongodb.metadata import MongoMetadata
from aalis_plugin_memory_mongodb.redaction import Redactor

Document = dict[str, Any]


_ORDER = [("timestamp", ASCENDING), ("seq", ASCENDING)]
_REVERSE = [("timestamp", DESCENDING), ("seq", DESCENDING)]
_CONTROL = [escape_str(kind) for kind in sorted(CONTROL_KINDS)]
_COUNTER_ID = "messages"


class MongoUnavailable(BackendUnavailable):
    """The server could not be reached or prepared at start-up; the message is redacted."""


#: A sequence number no store reaches (an int64, as the real ones), for sizing a document.
_UNBOUNDED = 2**62


def _count(limit: Limit) -> int:
    """A finite limit as pymongo wants it (0 there means "no limit", so callers handle 0)."""
    return 0 if limit == math.inf else int(limit)


class MongoMemory(MongoIdentity, MongoMetadata, MongoLeaseMethods, CompleteMemoryBackend):
    """A ``MemoryService`` with every optional method and extension, on one MongoDB database.

    Build it with ``await MongoMemory.connect(config)`` (which pings and creates indexes), or
    from an existing ``AsyncMongoClient`` followed by ``await store.ensure_indexes()``.
    ``close()`` closes the client only when ``connect`` created it. Arguments are checked by
    ``CompleteMemoryBackend``.
    """

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
        self._leases = MongoLeases(db[f"{config.collection_prefix}leases"])
        #: The caps of the two bounded queries (the conformance kit reads them).
        self.range_query_limit = config.range_query_limit
        self.cross_session_max_limit = config.cross_session_max_limit
        self._log = logger if logger is not None else get_logger("memory-mongodb")
        # Metadata reads through this store never see a commit_metadata batch half-applied.
        self._batch_lock = ReadWriteLock()
        #: Test seam: awaited inside ``archive_exact`` after the guard entry is written and
        #: before the messages are archived (a crash test kills the process there).
        self.after_guard: Callable[[], Awaitable[None]] | None = None

    # ---------------------------------------------------------------------------------
    # Life cycle
    # ---------------------------------------------------------------------------------

    @classmethod
    async def connect(cls, config: MongoConfig, *, logger: Any = None) -> MongoMemory:
        """Open a client for ``config.uri``, ping it, create the indexes.

        Fails with one ``MongoUnavailable`` (URI redacted) after about
        ``server_selection_timeout_ms`` when the server cannot be reached, and never waits
        longer than the two configured timeouts plus a second.
        """
        if config.uri is None:
            raise ValueError("MongoConfig.uri is not set")
        redactor = Redactor(config.uri)
        try:
            client: AsyncMongoClient[Document] = AsyncMongoClient(
                config.uri,
                connectTimeoutMS=config.connect_timeout_ms,
                serverSelectionTimeoutMS=config.server_selection_timeout_ms,
                appname="aalis-memory-mongodb",
                tz_aware=False,
                connect=False,
            )
        except (PyMongoError, ValueError, TypeError) as exc:
            raise MongoUnavailable(
                f"invalid MongoDB uri {redactor.display}: {redactor(exc)}"
            ) from None
        store = cls(
            client,
            database=config.database,
            collection_prefix=config.collection_prefix,
            range_query_limit=config.range_query_limit,
            cross_session_max_limit=config.cross_session_max_limit,
            logger=logger,
            owns_client=True,
        )
        deadline = asyncio.get_running_loop().time() + (
            (config.server_selection_timeout_ms + config.connect_timeout_ms) / 1000 + 1
        )
        where = f"{redactor.display} (database {config.database!r})"
        step = "ping"
        try:
            async with asyncio.timeout_at(deadline):
                await client.admin.command("ping")
                step = "indexes"
                await store.ensure_indexes()
        except Exception as exc:  # any failure here means "this server is not usable"
            await client.close()
            if step == "ping":
                message = (
                    f"cannot reach MongoDB at {where} within "
                    f"{config.server_selection_timeout_ms} ms: {_reason(exc, redactor)}"
                )
            else:
                message = f"cannot create the indexes at {where}: {_reason(exc, redactor)}"
            raise MongoUnavailable(message) from None
        except BaseException:  # cancelled: still release the client's sockets
            await client.close()
            raise
        return store

    async def ensure_indexes(self) -> None:
        """Create the collections' indexes (idempotent); one per query shape.

        * ``(session_id, archived, timestamp, seq)``: get_history, count_history, archive_span;
        * ``(session_id, timestamp, seq)``: full history, ranges, export, rewrites, deletes;
        * ``(archived, timestamp, seq)``: the cross-session query;
        * ``(platform, archived, timestamp, seq)``: the same filtered by platform;
        * ``_id`` (every collection has it, unique): the message id (identity.py);
        * metadata ``(namespace, key)`` unique: one entry per key, lookups and listings.
        """
        await self._messages.create_index(
            [("session_id", ASCENDING), ("archived", ASCENDING), *_ORDER],
            name="session_active_order",
        )
        await self._messages.create_index(
            [("session_id", ASCENDING), *_ORDER], name="session_order"
        )
        await self._messages.create_index([("archived", ASCENDING), *_ORDER], name="recent_order")
        await self._messages.create_index(
            [("platform", ASCENDING), ("archived", ASCENDING), *_ORDER], name="platform_order"
        )
        await self._metadata.create_index(
            [("namespace", ASCENDING), ("key", ASCENDING)], name="namespace_key", unique=True
        )

    async def close(self) -> None:
        if self._owns_client:
            await self._client.close()

    # ---------------------------------------------------------------------------------
    # Messages
    # ---------------------------------------------------------------------------------

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

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        doc = message_document(session_id, message, timestamp, archived=False)
        await self._refuse_stored_ids([doc["_id"]], every=False)
        doc["seq"] = await self._next_seq()
        await self._insert_one_checked(encode_document(doc, "message"))

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        count = limit
        active: Document = {"session_id": escape_str(session_id), "archived": False}
        if count == math.inf:
            return [self._decode(doc) for doc in await self._find(active, sort=_ORDER)]
        # Read the active messages newest first and stop at the (limit+1)-th conversation
        # message. The read is bounded (limit + a margin for markers), so its cost grows with
        # the limit, never with the session; in the rare window with more markers than the
        # margin, it is repeated with a larger bound.
        fetch = int(count) + 17
        while True:
            docs = await self._find(active, sort=_REVERSE, limit=fetch)
            window: list[Document] = []
            conversation = 0
            for doc in docs:
                if doc.get("kind") not in _CONTROL:
                    conversation += 1
                    if conversation > count:
                        return [self._decode(kept) for kept in reversed(window)]
                window.append(doc)
            if len(docs) < fetch:  # the whole active history fits in the window
                return [self._decode(kept) for kept in reversed(window)]
            fetch *= 4

    async def _count_history(self, session_id: str) -> int:
        return await self._messages.count_documents(
            {"session_id": escape_str(session_id), "archived": False, "kind": {"$nin": _CONTROL}}
        )

    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        docs = await self._find(
            {"session_id": escape_str(session_id)}, sort=_REVERSE, limit=_count(limit)
        )
        return [self._decode(doc) for doc in reversed(docs)]

    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        sid = escape_str(session_id)
        docs = await self._find(
            {"session_id": sid, "archived": False},
            sort=_ORDER,
            limit=_count(count),
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

    # -- exact archiving (aalis_api_memory._exact) ---------------------------------------
    #
    # Without multi-document transactions the commit is a sequence of single-document
    # atomic steps, ordered so that a crash or a concurrent writer at any point leaves a
    # state the caller can recognise (docs/reference/memory-contract.md, "Exact archiving"):
    # the guard entry is compared and set first (its ``rev`` changes on every write, so a
    # compare-and-set cannot be fooled by a delete and re-create), then the messages are
    # archived by ``_id``; when some of them vanished meanwhile the archive is undone and the
    # entry set back, and when the archive itself fails the entry keeps the new data.
    # (``find`` rather than ``count_documents`` with an ``_id`` filter: nx-27017 counts 0.)

    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        docs = await self._find(
            {"session_id": escape_str(session_id), "archived": False}, sort=_ORDER
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
        if oids and len(await self._find(active, sort=_ORDER, projection={"_id": 1})) != wanted:
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
                {"_id": {"$in": oids}}, sort=_ORDER, limit=1, projection={"_id": 1}
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

    async def _clear_all(self) -> None:
        await self._messages.delete_many({})

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
        docs = await self._find(flt, sort=_ORDER, limit=self.range_query_limit)
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
        docs = await self._find(flt, sort=_REVERSE, limit=query.limit)
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
            {"session_id": sid}, sort=_REVERSE, limit=_count(recent_limit), projection={"body": 1}
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
        docs = await self._find({"session_id": escape_str(session_id)}, sort=_ORDER)
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


def _reason(exc: Exception, redactor: Redactor, limit: int = 300) -> str:
    """One line saying why, redacted; a driver's topology dump repeats it at length."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = redactor(exc).split(", Timeout: ", 1)[0]
    if not isinstance(exc, PyMongoError):
        text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["MAX_DOCUMENT_BYTES", "MongoMemory", "MongoUnavailable"]
