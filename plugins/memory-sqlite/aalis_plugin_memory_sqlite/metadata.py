"""Metadata of ``SqliteMemory``: one row per entry of ``metadata (namespace, key, data, updated_at)``.

The contract's metadata group with ``WithMetadataKeys`` (aalis_api_memory.backend).
``commit_metadata`` is one transaction; an unreadable entry reads as ``None`` with a warning.
Each method encodes on the caller's side and hands the work to a thread: writes to the
worker that owns the connection (``_submit``), reads to the reader connection (``_read``), so a
read never queues behind a write waiting for another process's lock (``base.py``). The SQL of
the job is the synchronous ``Engine`` (``engine.py``), run on those threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aalis_api_memory.backend import EncodedOp
from aalis_api_memory.types import MetadataEntry

from aalis_plugin_memory_sqlite.base import SqliteBase
from aalis_plugin_memory_sqlite.engine import Engine


class SqliteMetadata(SqliteBase):
    """The metadata storage methods (a mixin of ``SqliteMemory``)."""

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        await self._submit(Engine.save_metadata, namespace, key, text, updated_at)

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        return await self._read(Engine.get_metadata, namespace, key)

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        return await self._read(Engine.list_metadata, namespace)

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        return await self._read(Engine.list_metadata_keys, namespace)

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        await self._submit(Engine.delete_metadata, namespace, key)

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        await self._submit(Engine.commit_metadata, ops, updated_at)

    async def _list_namespaces(self) -> list[str]:
        return await self._read(Engine.list_namespaces)


__all__ = ["SqliteMetadata"]
