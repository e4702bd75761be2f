"""Message ids in process memory: lookups and deletes by id.

The contract's ``WithMessagesById`` group (docs/reference/memory-contract.md, "Message
identity"). The store keeps an index ``id -> session`` of every stored message (``base.py``),
which refuses a stored id before anything changes and finds a message's session at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from aalis_api_memory import StoredRecord

from aalis_plugin_memory_inmemory._base import InMemoryBase


class InMemoryIdentity(InMemoryBase):
    """The ``MessagesById`` storage methods (a mixin of ``InMemoryMemory``)."""

    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        found: list[StoredRecord] = []
        for session_id in {self._ids[i] for i in ids if i in self._ids}:
            for row in self._rows(session_id):
                if row.message.id in ids:
                    found.append(
                        StoredRecord(
                            session_id=session_id, message=self._out(row), archived=row.archived
                        )
                    )
        return found

    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        doomed = set(ids)
        return self._delete_rows(session_id, lambda row: row.message.id in doomed)


__all__ = ["InMemoryIdentity"]
