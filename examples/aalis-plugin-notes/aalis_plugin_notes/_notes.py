"""Notes on top of any ``MemoryService``: one metadata entry per session.

Notes live in namespace ``notes`` under the session id as key, as
``{"notes": [{"text": ..., "at": <epoch ms>}, ...]}``; a note about one person carries
``"person": "PLATFORM:USER_ID"``, which is how ``aalis forget`` finds it in a group session. Keeping them in the memory metadata
store rather than a file of our own means they follow the host's choice of backend (SQLite,
MongoDB...), move with ``aalis export --all`` / ``aalis migrate``, and are removed by the
same ``aalis clear`` as everything else.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    #: ``PLATFORM:USER_ID`` of the person the note is by or about, when someone said so.
    person: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "at": self.at}
        if self.person is not None:
            data["person"] = self.person
        return data


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
            Note(
                str(item["text"]),
                int(item["at"]),
                item["person"] if isinstance(item.get("person"), str) else None,
            )
            for item in notes
            if isinstance(item, dict) and "text" in item and "at" in item
        ]

    async def add(self, session_id: str, text: str, person: str | None = None) -> Note:
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
        if person is not None and not isinstance(person, str):
            raise TypeError(f"person must be a str PLATFORM:USER_ID, got {type(person).__name__}")
        note = Note(text, now_ms(), person)
        await self._memory.save_metadata(
            NAMESPACE, session_id, {"notes": [n.to_json() for n in [*notes, note]]}
        )
        return note

    async def forget(self, person: str, private_sessions: Iterable[str]) -> int:
        """Delete every note of ``private_sessions`` (the person's own sessions, erased whole)
        and every note marked as ``person``'s elsewhere; returns how many went."""
        gone = set(private_sessions)
        removed = 0
        for entry in await self._memory.list_metadata(NAMESPACE):
            notes = await self.list(entry.key)
            if entry.key in gone:
                removed += len(notes)
                await self._memory.delete_metadata(NAMESPACE, entry.key)
                continue
            kept = [note for note in notes if note.person != person]
            if len(kept) != len(notes):
                removed += len(notes) - len(kept)
                await self._memory.save_metadata(
                    NAMESPACE, entry.key, {"notes": [note.to_json() for note in kept]}
                )
        return removed

    async def clear(self, session_id: str) -> int:
        """Delete the session's notes; returns how many there were."""
        count = len(await self.list(session_id))
        await self._memory.delete_metadata(NAMESPACE, session_id)
        return count


__all__ = ["NAMESPACE", "Note", "Notes"]
