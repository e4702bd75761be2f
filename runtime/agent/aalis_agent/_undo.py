"""Undo the last turn of a session: the newest user message and everything after it.

Deleting goes by id (``delete_messages_by_ids``) where the store offers it, so a turn is
removed exactly even when another message shares its millisecond; a store without identity
falls back to ``delete_messages_by_timestamps``, refusing when a timestamp is shared. Either
way archived copies go too, and the delete is announced with ``memory_messages_deleted`` and ``history_changed``, so every derived index
(semantic recall, a compression snapshot) forgets the turn as well. ``/undo`` in the chat
and ``aalis undo SESSION`` share this one function.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence

import attrs
from aalis_api_memory import AalisMemoryError, MemoryService, MessagesById, Rewrite, supports
from aalis_schema_message import Message

#: Conversation messages read first when looking for the last turn; the whole active
#: history is read only when the newest user message is further back than this.
_FIRST_WINDOW = 50


class UndoError(AalisMemoryError):
    """The last turn cannot be undone (nothing to undo, or the backend cannot delete)."""


@attrs.frozen
class UndoOutcome:
    """What ``undo_last_turn`` deleted: the turn's messages (oldest first) and how many rows
    the backend removed."""

    messages: tuple[Message, ...]
    deleted: int

    @property
    def timestamps(self) -> list[int]:
        return sorted({m.timestamp for m in self.messages if m.timestamp is not None})


def _last_turn(messages: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """(messages before the last turn, the last turn) of an active history."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and not message.is_control:
            return list(messages[:index]), list(messages[index:])
    return list(messages), []


async def undo_last_turn(
    memory: MemoryService,
    session_id: str,
    emit: Callable[..., Awaitable[None]],
) -> UndoOutcome:
    """Delete the last turn of ``session_id`` and emit the change events.

    ``memory`` is a ``MemoryService`` (a handle's ``use``), ``emit`` the host's or a plugin
    context's ``emit``. Raises ``UndoError`` when the session has no user message in its
    active history, or when the backend can delete neither by id nor by timestamp; on a
    backend without ``delete_messages_by_ids``, also when an earlier message shares a
    timestamp with the turn (deleting by timestamp would take it too). Nothing is deleted
    then.
    """
    if not isinstance(session_id, str):
        raise TypeError(f"session_id must be a str, got {type(session_id).__name__}")
    by_id = supports(memory, MessagesById, "delete_messages_by_ids")
    if not by_id and not supports(memory, Rewrite, "delete_messages_by_timestamps"):
        raise UndoError(
            "the memory backend offers neither delete_messages_by_ids() nor "
            "delete_messages_by_timestamps()"
        )
    history: Sequence[Message] = await memory.get_history(session_id, _FIRST_WINDOW)
    before, turn = _last_turn(history)
    if not turn:
        history = await memory.get_history(session_id, math.inf)
        before, turn = _last_turn(history)
    if not turn:
        raise UndoError(f"nothing to undo in session {session_id!r}")
    turn = [m for m in turn if not m.is_control]
    timestamps = sorted({m.timestamp for m in turn if m.timestamp is not None})
    ids = [m.id for m in turn if m.id is not None]
    if by_id and len(ids) == len(turn):
        assert supports(memory, MessagesById, "delete_messages_by_ids")
        deleted = int(await memory.delete_messages_by_ids(session_id, ids))
    else:
        shared = {m.timestamp for m in before if m.timestamp is not None} & set(timestamps)
        if shared or not supports(memory, Rewrite, "delete_messages_by_timestamps"):
            raise UndoError(
                "cannot undo: an earlier message shares a timestamp with the last turn, and "
                "this store can delete only by timestamp, which would remove it too"
                if shared
                else "the memory backend returned messages without ids and offers no "
                "delete_messages_by_timestamps()"
            )
        deleted = int(await memory.delete_messages_by_timestamps(session_id, timestamps))
        ids = []
    await emit("memory_messages_deleted", session_id=session_id, timestamps=timestamps, ids=ids)
    await emit("history_changed", session_id=session_id)
    return UndoOutcome(messages=tuple(turn), deleted=deleted)


__all__ = ["UndoError", "UndoOutcome", "undo_last_turn"]
