"""Saving conversation messages the way every agent and adapter must: stamped, then announced.

Two rules make a saved message usable by the rest of the system. Its timestamp must be its
own within the session (``delete_messages_by_timestamps`` and the vector index address
messages by it, so two messages must never share one); and ``memory_messages_saved`` must
follow the save, or derived indexes (semantic recall) never learn about the message.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import attrs
from aalis_schema_message import Message, now_ms

from aalis_api_memory.service import MemoryService
from aalis_core.host_services import HostServices

SAVED_EVENT = "memory_messages_saved"


class SessionClock:
    """Strictly increasing epoch-ms timestamps per session, shared by everyone in a process.

    The chat, the adapters and the turn API may all write to one session; taking their
    timestamps from one clock keeps them distinct even within a millisecond.
    """

    def __init__(self) -> None:
        self._last: dict[str, int] = {}
        self._lock = threading.Lock()

    def next(self, session_id: str, at_least: int | None = None) -> int:
        """Now, but after the last timestamp this clock gave ``session_id`` (and not before
        ``at_least``, e.g. the newest stored message's timestamp)."""
        with self._lock:
            floor = max(self._last.get(session_id, 0) + 1, at_least or 0)
            stamp = max(now_ms(), floor)
            self._last[session_id] = stamp
            return stamp


#: The process-wide clock used by ``save_conversation``.
SESSION_CLOCK = SessionClock()


def stamped(message: Message, session_id: str, clock: SessionClock = SESSION_CLOCK) -> Message:
    """``message`` with a timestamp of its own (a timestamp it already has is kept)."""
    if message.timestamp is not None:
        return message
    return attrs.evolve(message, timestamp=clock.next(session_id))


async def announce_saved(
    host: HostServices | None, session_id: str, messages: Sequence[Message]
) -> None:
    """Emit ``memory_messages_saved`` when a loaded contract declares it (otherwise nobody
    can be listening, and there is nothing to tell)."""
    if not messages or host is None:
        return
    try:
        host.hook_impls(SAVED_EVENT)
    except ValueError:
        return
    await host.emit(SAVED_EVENT, session_id=session_id, messages=list(messages))


async def save_conversation(
    memory: MemoryService,
    session_id: str,
    messages: Sequence[Message],
    *,
    host: HostServices | None = None,
    clock: SessionClock = SESSION_CLOCK,
) -> list[Message]:
    """Stamp, save (in order) and announce ``messages``; returns them as stored.

    ``memory`` is a ``MemoryService`` (a handle's ``use``). When a save fails, the messages
    saved before it are still announced, then the error propagates.
    """
    saved: list[Message] = []
    try:
        for message in messages:
            ready = stamped(message, session_id, clock)
            await memory.save_message(session_id, ready)
            saved.append(ready)
    finally:
        await announce_saved(host, session_id, saved)
    return saved


__all__ = [
    "SAVED_EVENT",
    "SESSION_CLOCK",
    "SessionClock",
    "announce_saved",
    "save_conversation",
    "stamped",
]
