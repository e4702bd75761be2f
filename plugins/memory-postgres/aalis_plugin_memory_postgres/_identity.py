"""Message ids on PostgreSQL: lookups and deletes by id, and the id conflict.

The rules are in docs/reference/memory-contract.md ("Message identity"); how this store keeps
them is in docs/backends/postgres.md ("Message ids"). Every message's id is in the ``id``
column, under a unique index (``schema.py``), and in its JSON text (what reads return). A stored
id makes the save's statement, the import's transaction or the exact archive's marker fail
whole; ``id_conflict`` names that failure as the contract does (``MessageIdConflict``).
"""

from __future__ import annotations

from collections.abc import Sequence

from aalis_api_memory import MessageIdConflict, StoredRecord
from psycopg.errors import UniqueViolation

from aalis_plugin_memory_postgres._base import PostgresBase
from aalis_plugin_memory_postgres._codec import decode_messages_indexed, unescape

#: The unique index on message ids (schema.py): its violation is a ``MessageIdConflict``.
_ID_INDEX = "messages_id"


def id_conflict(exc: UniqueViolation) -> Exception:
    """A duplicate message id as the contract names it; any other violation as it is."""
    if exc.diag.constraint_name != _ID_INDEX:
        return exc
    return MessageIdConflict(f"a message id is already stored: {exc.diag.message_detail}")


class PostgresIdentity(PostgresBase):
    """The ``MessagesById`` storage methods (a mixin of ``PostgresMemory``)."""

    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        rows = await self._fetch(self._sql.by_ids, (list(ids),))
        decoded = decode_messages_indexed([row[2] for row in rows], self._corrupt("*"))
        return [
            StoredRecord(
                session_id=unescape(rows[i][0]), message=message, archived=bool(rows[i][1])
            )
            for i, message in decoded
        ]

    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        return await self._delete_where(self._sql.delete_by_ids, session_id, list(ids))


__all__ = ["PostgresIdentity", "id_conflict"]
