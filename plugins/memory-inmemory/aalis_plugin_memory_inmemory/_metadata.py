"""Metadata of ``InMemoryMemory``: ``namespace -> key -> Entry`` (raw JSON text, write time).

The contract's metadata group with ``WithMetadataKeys`` (aalis_api_memory._backend). Entries
are kept as JSON text, so the store can hold an unreadable entry as a database can
(``put_raw_metadata``, for tests); it reads as ``None`` with a warning. ``commit_metadata``
applies its batch without an ``await``: nobody on the loop observes half of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aalis_api_memory import EncodedOp, MetadataEntry, check_key, check_namespace, decode_metadata
from aalis_schema_message import now_ms

from aalis_plugin_memory_inmemory._base import Entry, InMemoryBase


class InMemoryMetadata(InMemoryBase):
    """The metadata storage methods (a mixin of ``InMemoryMemory``)."""

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        self._metadata.setdefault(namespace, {})[key] = Entry(text, updated_at)

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        entry = self._metadata.get(namespace, {}).get(key)
        if entry is None:
            return None
        data = decode_metadata(entry.text)
        if data is None:
            self._log().warning("unreadable metadata entry", namespace=namespace, key=key)
        return data

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        entries = []
        for key, entry in sorted(self._metadata.get(namespace, {}).items()):
            data = decode_metadata(entry.text)
            if data is not None:
                entries.append(MetadataEntry(key=key, data=data, updated_at=entry.updated_at))
        return entries

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        return sorted(self._metadata.get(namespace, {}))

    async def _list_namespaces(self) -> list[str]:
        return sorted(namespace for namespace, entries in self._metadata.items() if entries)

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        self._drop(namespace, key)

    def _drop(self, namespace: str, key: str) -> None:
        entries = self._metadata.get(namespace)
        if entries is not None:
            entries.pop(key, None)
            if not entries:
                del self._metadata[namespace]

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        # No await in between: on one event loop nobody observes half a batch.
        for op, namespace, key, text in ops:
            if op == "put":
                assert text is not None
                self._metadata.setdefault(namespace, {})[key] = Entry(text, updated_at)
            else:
                self._drop(namespace, key)

    def put_raw_metadata(self, namespace: str, key: str, raw_text: str) -> None:
        """Store ``raw_text`` as is, unreadable or not: lets tests reproduce a corrupt entry."""
        self._metadata.setdefault(check_namespace(namespace), {})[check_key(key)] = Entry(
            raw_text, now_ms()
        )


__all__ = ["InMemoryMetadata"]
