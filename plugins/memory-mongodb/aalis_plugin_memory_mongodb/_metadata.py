"""Metadata of ``MongoMemory``: one document per entry, ``{namespace, key, data, updated_at, rev}``.

A mixin of the store (store.py) over its shared state (base.py), as every job of the contract
is. ``data`` goes through the codec's ``encode_json`` (escaped keys, big integers), so any
JSON object the contract accepts round-trips; ``rev`` changes on every write, which is what
``archive_exact``'s compare-and-set filters on. Reads through this store never see a
``commit_metadata`` batch half-applied (``ReadWriteLock``): MongoDB gives the batch no
transaction, so this process orders its own readers around it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from aalis_api_memory import EncodedOp, MetadataEntry
from bson import ObjectId
from bson.raw_bson import RawBSONDocument
from pymongo import DeleteOne, ReplaceOne

from aalis_plugin_memory_mongodb._base import MongoBase
from aalis_plugin_memory_mongodb._codec import (
    StoredDataError,
    decode_json,
    encode_document,
    encode_json,
    escape_str,
    unescape_str,
)

Document = dict[str, Any]


class MongoMetadata(MongoBase):
    """The metadata methods of the memory contract, on ``<prefix>metadata`` (a mixin)."""

    def _metadata_filter(self, namespace: str, key: str) -> Document:
        return {"namespace": escape_str(namespace), "key": escape_str(key)}

    def _metadata_document(self, namespace: str, key: str, text: str, now: int) -> RawBSONDocument:
        # ``text`` is the shared validator's JSON: parsing it back gives a fresh, JSON-typed
        # copy (tuples as lists), exactly what every backend returns.
        data = encode_json(json.loads(text), "metadata data")
        # ``rev`` changes on every write: archive_exact's compare-and-set filters on it.
        return encode_document(
            {
                **self._metadata_filter(namespace, key),
                "data": data,
                "updated_at": now,
                "rev": ObjectId().binary.hex(),  # a str: some wire servers mis-match ObjectIds
            },
            f"metadata {namespace!r}/{key!r}",
        )

    def _read_data(self, doc: Mapping[str, Any]) -> dict[str, Any] | None:
        try:
            data = decode_json(doc.get("data"))
        except StoredDataError:
            return None
        return data if isinstance(data, dict) else None

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        doc = self._metadata_document(namespace, key, text, updated_at)
        await self._metadata.replace_one(self._metadata_filter(namespace, key), doc, upsert=True)

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        async with self._batch_lock.reading():
            doc = await self._metadata.find_one(self._metadata_filter(namespace, key))
        if doc is None:
            return None
        data = self._read_data(doc)
        if data is None:
            self._log.warning(
                "unreadable metadata entry reads as None",
                namespace=namespace,
                key=key,
                collection=self._metadata.name,
            )
        return data

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        async with self._batch_lock.reading():
            docs = await self._metadata.find({"namespace": escape_str(namespace)}).to_list()
        entries = []
        for doc in docs:
            data = self._read_data(doc)
            if data is None:
                continue
            updated_at = doc.get("updated_at")
            entries.append(
                MetadataEntry(
                    key=unescape_str(doc["key"]),
                    data=data,
                    updated_at=int(updated_at) if isinstance(updated_at, int) else 0,
                )
            )
        entries.sort(key=lambda entry: entry.key)
        return entries

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        async with self._batch_lock.reading():
            cursor = self._metadata.find({"namespace": escape_str(namespace)}, {"key": 1, "_id": 0})
            docs = await cursor.to_list()
        return sorted(unescape_str(doc["key"]) for doc in docs)

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        await self._metadata.delete_one(self._metadata_filter(namespace, key))

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        # Every op's data is encoded to BSON before anything is sent.
        writes: list[ReplaceOne[Any] | DeleteOne] = []
        for op, namespace, key, text in ops:
            flt = self._metadata_filter(namespace, key)
            if op == "put":
                assert text is not None
                writes.append(
                    ReplaceOne(
                        flt, self._metadata_document(namespace, key, text, updated_at), upsert=True
                    )
                )
            else:
                writes.append(DeleteOne(flt))
        if writes:
            async with self._batch_lock.writing():
                await self._metadata.bulk_write(writes, ordered=True)

    async def _list_namespaces(self) -> list[str]:
        # $group rather than distinct(): nx-27017's distinct turns strings such as "1",
        # "false" or "null" into numbers, booleans and None.
        async with self._batch_lock.reading():
            cursor = await self._metadata.aggregate([{"$group": {"_id": "$namespace"}}])
            rows = await cursor.to_list()
        return sorted(unescape_str(row["_id"]) for row in rows)


__all__ = ["MongoMetadata"]
