"""Metadata of ``SqliteMemory``: one row per entry of ``metadata (namespace, key, data, updated_at)``.

The contract's metadata group with ``WithMetadataKeys`` (aalis_api_memory._backend).
``commit_metadata`` is one transaction; an unreadable entry reads as ``None`` with a warning.
Each method encodes on the caller's side and hands the work to a thread: writes to the
worker that owns the connection (``_submit``), reads to the reader connection (``_read``), so a
read never queues behind a write waiting for another process's lock (``base.py``). The SQL of
the job is below, as functions of the ``Engine`` of the thread that runs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aalis_api_memory import EncodedOp, MetadataEntry, decode_metadata

from aalis_plugin_memory_sqlite._base import SqliteBase
from aalis_plugin_memory_sqlite._engine import Engine
from aalis_plugin_memory_sqlite._transaction import transaction

_PUT = (
    "INSERT INTO metadata (namespace, key, data, updated_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at"
)
_DELETE = "DELETE FROM metadata WHERE namespace = ? AND key = ?"

# -- on the store's threads (``engine`` is the writer's or the reader's) ----------------------


def save_metadata(engine: Engine, namespace: str, key: str, text: str, now: int) -> None:
    engine.conn.execute(_PUT, (namespace, key, text, now))


def get_metadata(engine: Engine, namespace: str, key: str) -> dict[str, Any] | None:
    row = engine.conn.execute(
        "SELECT data FROM metadata WHERE namespace = ? AND key = ?", (namespace, key)
    ).fetchone()
    if row is None:
        return None
    data = decode_metadata(row[0])
    if data is None:
        engine.warn("unreadable metadata entry read as None", namespace=namespace, key=key)
    return data


def list_metadata(engine: Engine, namespace: str) -> list[MetadataEntry]:
    entries: list[MetadataEntry] = []
    for key, text, updated_at in engine.conn.execute(
        "SELECT key, data, updated_at FROM metadata WHERE namespace = ? ORDER BY key",
        (namespace,),
    ):
        data = decode_metadata(text)
        if data is not None:
            entries.append(MetadataEntry(key=key, data=data, updated_at=updated_at))
    return entries


def list_metadata_keys(engine: Engine, namespace: str) -> list[str]:
    rows = engine.conn.execute(
        "SELECT key FROM metadata WHERE namespace = ? ORDER BY key", (namespace,)
    )
    return [row[0] for row in rows]


def delete_metadata(engine: Engine, namespace: str, key: str) -> None:
    engine.conn.execute(_DELETE, (namespace, key))


def commit_metadata(
    engine: Engine, ops: Sequence[tuple[str, str, str, str | None]], now: int
) -> None:
    conn = engine.conn
    with transaction(conn):
        for op, namespace, key, text in ops:
            if op == "put":
                conn.execute(_PUT, (namespace, key, text, now))
            else:
                conn.execute(_DELETE, (namespace, key))


def list_namespaces(engine: Engine) -> list[str]:
    return [
        row[0]
        for row in engine.conn.execute("SELECT DISTINCT namespace FROM metadata ORDER BY namespace")
    ]


# -- the storage methods ---------------------------------------------------------------------


class SqliteMetadata(SqliteBase):
    """The metadata storage methods (a mixin of ``SqliteMemory``)."""

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        await self._submit(save_metadata, namespace, key, text, updated_at)

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        return await self._read(get_metadata, namespace, key)

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        return await self._read(list_metadata, namespace)

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        return await self._read(list_metadata_keys, namespace)

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        await self._submit(delete_metadata, namespace, key)

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        await self._submit(commit_metadata, ops, updated_at)

    async def _list_namespaces(self) -> list[str]:
        return await self._read(list_namespaces)


__all__ = ["SqliteMetadata"]
