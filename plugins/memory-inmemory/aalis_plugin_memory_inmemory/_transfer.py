"""Listing, exporting and importing whole sessions in process memory (``aalis export``).

The contract's ``WithTransfer`` group (aalis_api_memory._backend). An import refuses every
stored or repeated id before it inserts anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from aalis_api_memory import ImportRecord, SessionInfo, StoredMessage

from aalis_plugin_memory_inmemory._base import InMemoryBase


class InMemoryTransfer(InMemoryBase):
    """The transfer storage methods (a mixin of ``InMemoryMemory``)."""

    async def _list_sessions(self) -> list[SessionInfo]:
        infos = []
        for session_id, rows in self._sessions.items():
            archived = sum(1 for row in rows if row.archived)
            infos.append(
                SessionInfo(
                    session_id=session_id,
                    active=len(rows) - archived,
                    archived=archived,
                    last_timestamp=rows[-1].timestamp if rows else None,
                )
            )
        infos.sort(key=lambda info: info.session_id)
        infos.sort(key=lambda info: info.last_timestamp or 0, reverse=True)
        return infos

    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        return [StoredMessage(self._out(row), row.archived) for row in self._rows(session_id)]

    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        self._refuse_stored_ids([record.message for record in records])
        for record in records:
            self._insert(session_id, record.message, record.timestamp, record.archived)
        return len(records)


__all__ = ["InMemoryTransfer"]
