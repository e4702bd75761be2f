"""Saving conversation messages the way every agent and adapter must: stamped, then announced.

Two rules make a saved message usable by the rest of the system. It carries its identity
before it is saved: an id (``Message.id``, what every derived layer keys on) and a
timestamp that orders it after what this process said before in the session (two processes
may still share a millisecond, which is why nothing keys on timestamps). And
``memory_messages_saved`` must follow the save, with the messages as stored, ids included,
or derived indexes (semantic recall) never learn about the message.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import attrs
from aalis_api_memory import MemoryService
from aalis_schema_message import Message, new_message_id, now_ms

from aalis_core import HostServices

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
    """``message`` with an id and a timestamp of its own (ones it already has are kept)."""
    if message.timestamp is None:
        message = attrs.evolve(message, timestamp=clock.next(session_id))
    if message.id is None:
        message = message.with_id(new_message_id())
    return message


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
