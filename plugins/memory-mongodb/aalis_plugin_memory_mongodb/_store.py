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
from typing import Any

from aalis_api_memory import BackendUnavailable
from pymongo import AsyncMongoClient
from pymongo.errors import PyMongoError

from aalis_plugin_memory_mongodb._base import Document, MongoBase
from aalis_plugin_memory_mongodb._codec import MAX_DOCUMENT_BYTES
from aalis_plugin_memory_mongodb._config import MongoConfig
from aalis_plugin_memory_mongodb._exact import MongoExact
from aalis_plugin_memory_mongodb._history import MongoHistory
from aalis_plugin_memory_mongodb._identity import MongoIdentity
from aalis_plugin_memory_mongodb._leases import MongoLeases
from aalis_plugin_memory_mongodb._metadata import MongoMetadata
from aalis_plugin_memory_mongodb._queries import MongoQueries
from aalis_plugin_memory_mongodb._redaction import Redactor
from aalis_plugin_memory_mongodb._schema import create_indexes
from aalis_plugin_memory_mongodb._transfer import MongoTransfer


class MongoUnavailable(BackendUnavailable):
    """The server could not be reached or prepared at start-up; the message is redacted."""


class MongoMemory(
    MongoHistory,
    MongoQueries,
    MongoTransfer,
    MongoExact,
    MongoIdentity,
    MongoMetadata,
    MongoLeases,
    MongoBase,
):
    """A ``MemoryService`` with every optional method and extension, on one MongoDB database.

    Build it with ``await MongoMemory.connect(config)`` (which pings and creates indexes), or
    from an existing ``AsyncMongoClient`` followed by ``await store.ensure_indexes()``.
    ``close()`` closes the client only when ``connect`` created it. Arguments are checked by
    ``CompleteMemoryBackend``; each group of storage methods is a mixin of its own module
    (``history.py``, ``queries.py``, ``identity.py``, ``transfer.py``, ``exact.py``,
    ``metadata.py``, ``leases.py``) over the shared state of ``base.py``.
    """

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
        """Create the collections' indexes (idempotent; which and why: ``schema.py``)."""
        await create_indexes(self._messages, self._metadata)

    async def close(self) -> None:
        if self._owns_client:
            await self._client.close()


def _reason(exc: Exception, redactor: Redactor, limit: int = 300) -> str:
    """One line saying why, redacted; a driver's topology dump repeats it at length."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = redactor(exc).split(", Timeout: ", 1)[0]
    if not isinstance(exc, PyMongoError):
        text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["MAX_DOCUMENT_BYTES", "MongoMemory", "MongoUnavailable"]
