"""Destructive requests name what they remove and go only when confirmed.

A clear, an undo or a forget cannot be taken back, and the page is one click away from
each. So the page first shows what would go (the clear types and the session; the messages
of the last turn; the person) and asks; the API refuses a destructive request whose body
does not say ``"confirm": true``, so no script or stray click removes anything by default.
An undo may also carry the timestamps the user was shown (``expect``): when the last turn
changed in between (another process answered meanwhile), nothing is deleted. See
docs/host/serve.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from aalis_api_memory import MemoryService
from aalis_schema_message import Message

from aalis_core import AalisError

#: The body key a destructive request must set to ``true``.
CONFIRM_KEY = "confirm"
#: Conversation messages read first when looking for the last turn (as ``undo_last_turn``).
FIRST_WINDOW = 50


class NotConfirmed(AalisError, ValueError):
    """A destructive request without ``"confirm": true``; nothing was changed."""


class TurnChanged(AalisError, ValueError):
    """The last turn is not the one the user confirmed; nothing was deleted."""


def require_confirmation(body: Mapping[str, Any], action: str) -> None:
    """Raise ``NotConfirmed`` unless ``body`` says ``"confirm": true`` (exactly true)."""
    if body.get(CONFIRM_KEY) is not True:
        raise NotConfirmed(
            f'{action} needs "{CONFIRM_KEY}": true in the body (it cannot be undone); '
            "nothing was changed"
        )


def last_turn(messages: Sequence[Message]) -> list[Message]:
    """The messages an undo deletes: the newest user message and everything after it,
    control markers left out (the rule of ``aalis_agent.undo_last_turn``)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and not message.is_control:
            return [m for m in messages[index:] if not m.is_control]
    return []


async def undo_preview(memory: MemoryService, session_id: str) -> list[Message]:
    """What an undo of ``session_id`` would delete now (empty: nothing to undo)."""
    turn = last_turn(await memory.get_history(session_id, FIRST_WINDOW))
    if not turn:
        turn = last_turn(await memory.get_history(session_id, math.inf))
    return turn


def expected_timestamps(body: Mapping[str, Any]) -> list[int] | None:
    """The ``expect`` list of an undo body (timestamps the user was shown), or None."""
    raw = body.get("expect")
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in raw
    ):
        raise ValueError("expect must be a list of message timestamps (integers)")
    return sorted(set(raw))


def check_expected(turn: Sequence[Message], expected: list[int] | None) -> None:
    """Raise ``TurnChanged`` when ``expected`` is given and ``turn`` is another turn."""
    if expected is None:
        return
    current = sorted({m.timestamp for m in turn if m.timestamp is not None})
    if current != expected:
        raise TurnChanged(
            "the last turn changed since it was shown (another message arrived or it was "
            "already undone); nothing was deleted, look again"
        )


__all__ = [
    "CONFIRM_KEY",
    "FIRST_WINDOW",
    "NotConfirmed",
    "TurnChanged",
    "check_expected",
    "expected_timestamps",
    "last_turn",
    "require_confirmation",
    "undo_preview",
]
