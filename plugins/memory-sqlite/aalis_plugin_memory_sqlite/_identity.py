"""Message ids on SQLite: lookups and deletes by id.

The contract's ``WithMessagesById`` group (docs/reference/memory-contract.md, "Message
identity"). Every message's id is in the unique ``message_id`` column and in its JSON text
(``codec.py``); a stored id fails the save or import whole (``engine.id_conflict``).
Each method encodes on the caller's side and hands the work to a thread: writes to the
worker that owns the connection (``_submit``), reads to the reader connection (``_read``), so a
read never queues behind a write waiting for another process's lock (``base.py``). The SQL of
the job is the synchronous ``Engine`` (``engine.py``), run on those threads.
"""

from __future__ import annotations

from collections.abc import Sequence

from aalis_api_memory import StoredRecord

from aalis_plugin_memory_sqlite._base import SqliteBase
from aalis_plugin_memory_sqlite._engine import Engine


class SqliteIdentity(SqliteBase):
    """The ``MessagesById`` storage methods (a mixin of ``SqliteMemory``)."""

    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        return await self._read(Engine.get_messages_by_ids, ids)

    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        return await self._submit(Engine.delete_messages_by_ids, session_id, ids)


__all__ = ["SqliteIdentity"]
