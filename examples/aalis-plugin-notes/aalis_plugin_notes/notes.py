"""Notes on top of any ``MemoryService``: one metadata entry per session.

Notes live in namespace ``notes`` under the session id as key, as
``{"notes": [{"text": ..., "at": <epoch ms>}, ...]}``. Keeping them in the memory metadata
store rather than a file of our own means they follow the host's choice of backend (SQLite,
MongoDB...), move with ``aalis export --all`` / ``aalis migrate``, and are removed by the
same ``aalis clear`` as everything else.
"""

from __future__ import annotations

from typing import Any

import attrs
from aalis_api_memory import MemoryService
from aalis_schema_message import now_ms

#: The metadata namespace this plugin owns.
NAMESPACE = "notes"


@attrs.frozen
class Note:
    text: str
    at: int

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "at": self.at}


class Notes:
    """Reads and writes one session's notes through a memory service (a handle's ``use``)."""

    def __init__(
        self, memory: MemoryService, *, max_notes: int = 100, max_length: int = 2000
    ) -> None:
        self._memory = memory
        self._max_notes = max_notes
        self._max_length = max_length

    async def list(self, session_id: str) -> list[Note]:
        """The session's notes, oldest first (none for an unknown session)."""
        data = await self._memory.get_metadata(NAMESPACE, session_id)
        if data is None:
            return []
        notes = data.get("notes")
        if not isinstance(notes, list):
            return []
        return [
            Note(str(item["text"]), int(item["at"]))
            for item in notes
            if isinstance(item, dict) and "text" in item and "at" in item
        ]

    async def add(self, session_id: str, text: str) -> Note:
        """Append a note; refuses empty, over-long text and a full session, writing nothing.

        A read-modify-write: two processes adding to one session at the same instant may
        lose one note. Fine for notes typed by a person; a plugin with concurrent writers
        would keep one metadata key per item instead.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a note needs some text")
        if len(text) > self._max_length:
            raise ValueError(f"a note holds at most {self._max_length} characters (max_length)")
        notes = await self.list(session_id)
        if len(notes) >= self._max_notes:
            raise ValueError(f"session {session_id!r} already has {len(notes)} notes (max_notes)")
        note = Note(text, now_ms())
        await self._memory.save_metadata(
            NAMESPACE, session_id, {"notes": [n.to_json() for n in [*notes, note]]}
        )
        return note

    async def clear(self, session_id: str) -> int:
        """Delete the session's notes; returns how many there were."""
        count = len(await self.list(session_id))
        await self._memory.delete_metadata(NAMESPACE, session_id)
        return count


__all__ = ["NAMESPACE", "Note", "Notes"]
