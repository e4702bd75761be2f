"""Metadata of ``PostgresMemory``: one row per entry of ``metadata (namespace, key, data, updated_at)``.

The contract's metadata group with ``WithMetadataKeys`` (aalis_api_memory._backend).
``commit_metadata`` runs its batch in one transaction, consecutive operations of one kind as
one pipelined ``executemany``; an unreadable entry reads as ``None`` with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aalis_api_memory import EncodedOp, MetadataEntry, decode_metadata

from aalis_plugin_memory_postgres._base import PostgresBase
from aalis_plugin_memory_postgres._codec import escape, unescape


class PostgresMetadata(PostgresBase):
    """The metadata storage methods (a mixin of ``PostgresMemory``)."""

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(self._sql.put, (escape(namespace), escape(key), text, updated_at))

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        rows = await self._fetch(self._sql.get, (escape(namespace), escape(key)))
        if not rows:
            return None
        data = decode_metadata(rows[0][0])
        if data is None:
            self._logger.warning(
                "unreadable metadata entry read as None", namespace=namespace, key=key
            )
        return data

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        entries: list[MetadataEntry] = []
        for key, text, updated_at in await self._fetch(self._sql.list, (escape(namespace),)):
            data = decode_metadata(text)
            if data is not None:
                entries.append(
                    MetadataEntry(key=unescape(key), data=data, updated_at=int(updated_at))
                )
        return entries

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        rows = await self._fetch(self._sql.keys, (escape(namespace),))
        return [unescape(row[0]) for row in rows]

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(self._sql.delete, (escape(namespace), escape(key)))

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        # Consecutive operations of one kind go as one pipelined executemany; order is kept.
        runs: list[tuple[str, list[tuple[Any, ...]]]] = []
        for op, namespace, key, text in ops:
            ns, k = escape(namespace), escape(key)
            params: tuple[Any, ...] = (ns, k, text, updated_at) if op == "put" else (ns, k)
            if runs and runs[-1][0] == op:
                runs[-1][1].append(params)
            else:
                runs.append((op, [params]))
        async with (
            self.pool.connection() as conn,
            conn.transaction(),
            conn.cursor() as cursor,
        ):
            for op, batch in runs:
                await cursor.executemany(self._sql.put if op == "put" else self._sql.delete, batch)

    async def _list_namespaces(self) -> list[str]:
        rows = await self._fetch(self._sql.namespaces, ())
        return [unescape(row[0]) for row in rows]


__all__ = ["PostgresMetadata"]
