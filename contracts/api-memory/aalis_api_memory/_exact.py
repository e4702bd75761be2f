"""Exact archiving: the optional extension that makes compression safe across processes.

Positional ``archive_span`` archives "the first N active messages at call time": when another
process saves, archives or clears in between, those are not the messages a summary covers.
The extension replaces positions with identities read in one snapshot and a guard entry
compared in the commit, so a compression archives exactly what its summary covers, or
nothing. The full contract text is in docs/reference/memory-contract.md ("Exact archiving").

- ``history_snapshot(session_id) -> HistorySnapshot``: the active history, as
  ``get_history(session_id, math.inf)``, with one opaque identity per message.
- ``archive_exact(session_id, ids, *, guard, marker=None) -> int``: when the guard entry
  still holds ``guard.expected`` and every id names an active message of the session, put
  ``guard.data``, archive exactly those messages and save ``marker``; otherwise raise
  ``ArchiveConflict`` and change nothing.

The guard entry is the session's compression lease: every commit replaces it (a new
revision), a clear deletes it, so of two commits that read the same entry only the first
can succeed, and a commit that read an entry a clear deleted meanwhile fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeGuard

import attrs
from aalis_schema_message import Message

from aalis_api_memory._errors import AalisMemoryError
from aalis_api_memory._service import ExactArchiving, supports
from aalis_api_memory._types import HistorySnapshot, MetadataGuard
from aalis_api_memory._validation import (
    check_key,
    check_message,
    check_namespace,
    decode_metadata,
    encode_metadata,
)

#: The optional methods of this extension (both or neither): ``ExactArchiving``'s.
EXACT_METHODS: tuple[str, str] = ("history_snapshot", "archive_exact")

ConflictReason = Literal["guard", "messages"]


class ArchiveConflict(AalisMemoryError):
    """``archive_exact`` found the store changed since the snapshot; nothing was changed.

    ``reason`` is ``"guard"`` (the guard entry no longer holds what was expected: another
    compression committed, or a clear deleted it) or ``"messages"`` (an id no longer names an
    active message of the session: archived, deleted, rewritten or cleared meanwhile).
    """

    def __init__(self, reason: ConflictReason, message: str) -> None:
        super().__init__(message)
        self.reason: ConflictReason = reason


def has_exact_archiving(memory: object) -> TypeGuard[ExactArchiving]:
    """True when ``memory`` (a backend or a handle's ``use``) offers both methods."""
    return supports(memory, ExactArchiving)


def check_ids(ids: object) -> tuple[str, ...]:
    """The ids argument of ``archive_exact``: a sequence of non-empty str, duplicates once."""
    if isinstance(ids, (str, bytes, Mapping)) or not isinstance(ids, Iterable):
        raise TypeError(f"ids must be a sequence of str, got {type(ids).__name__}")
    out: list[str] = []
    seen: set[str] = set()
    for item in ids:
        if not isinstance(item, str):
            raise TypeError(f"message ids are str, got {type(item).__name__}")
        if not item:
            raise ValueError("a message id is never empty")
        if item not in seen:
            seen.add(item)
            out.append(item)
    return tuple(out)


@attrs.frozen
class CheckedGuard:
    """A validated guard: the expected value normalised to JSON types, the new data encoded."""

    namespace: str
    key: str
    expected: dict[str, Any] | None
    text: str


def check_guard(guard: object) -> CheckedGuard:
    """Validate ``guard`` before anything is read or written (non-JSON data raises)."""
    if not isinstance(guard, MetadataGuard):
        raise TypeError(f"guard must be a MetadataGuard, got {type(guard).__name__}")
    namespace = check_namespace(guard.namespace)
    key = check_key(guard.key)
    expected = None
    if guard.expected is not None:
        expected = decode_metadata(encode_metadata(guard.expected))
    return CheckedGuard(namespace, key, expected, encode_metadata(guard.data))


def check_marker(marker: object) -> Message | None:
    return None if marker is None else check_message(marker)


def same_entry(stored: dict[str, Any] | None, expected: dict[str, Any] | None) -> bool:
    """Whether a stored entry (decoded; None when absent or unreadable) is the expected one."""
    return stored == expected


__all__ = [
    "EXACT_METHODS",
    "ArchiveConflict",
    "CheckedGuard",
    "ConflictReason",
    "ExactArchiving",
    "HistorySnapshot",
    "MetadataGuard",
    "check_guard",
    "check_ids",
    "check_marker",
    "has_exact_archiving",
    "same_entry",
]
