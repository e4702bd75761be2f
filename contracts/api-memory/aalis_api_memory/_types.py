"""Value types of the memory contract: metadata entries and ops, cross-session queries,
sessions, and the snapshot and guard of exact archiving (docs/reference/memory-contract.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
from aalis_schema_message import Message


@attrs.frozen(kw_only=True)
class MetadataEntry:
    """One readable metadata entry; ``updated_at`` is epoch milliseconds."""

    key: str
    data: dict[str, Any]
    updated_at: int


@attrs.frozen
class Put:
    """Write ``data`` under ``namespace``/``key`` (overwrite, no merge)."""

    namespace: str
    key: str
    data: dict[str, Any]


@attrs.frozen
class Delete:
    """Delete ``namespace``/``key``; a missing key is not an error."""

    namespace: str
    key: str


MetadataOp = Put | Delete


def _str_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    # A bare string is iterable; tuple("user") would silently become ("u", "s", "e", "r").
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise TypeError(f"expected a sequence of str or None, got {type(value).__name__}")
    return tuple(value)


@attrs.frozen(kw_only=True)
class RecentMessagesQuery:
    """Filters of ``get_recent_messages_across_sessions``; every filter is applied in the query.

    ``roles`` None or empty means ``("user", "assistant")``; ``kinds`` is a whitelist that
    excludes kind-less messages; ``exclude_kinds`` wins over ``kinds``; ``since_ts`` is
    inclusive; ``platform`` equals ``metadata["platform"]``.
    """

    limit: int | float = 50
    roles: tuple[str, ...] | None = attrs.field(default=None, converter=_str_tuple)
    kinds: tuple[str, ...] | None = attrs.field(default=None, converter=_str_tuple)
    exclude_kinds: tuple[str, ...] | None = attrs.field(default=None, converter=_str_tuple)
    since_ts: int | None = None
    platform: str | None = None
    exclude_session_ids: tuple[str, ...] | None = attrs.field(default=None, converter=_str_tuple)

    @property
    def effective_roles(self) -> tuple[str, ...]:
        return self.roles if self.roles else ("user", "assistant")


@attrs.frozen
class RecentMessageRecord:
    session_id: str
    message: Message


@attrs.frozen(kw_only=True)
class SessionInfo:
    """A session as ``list_sessions`` reports it; ``last_timestamp`` covers every kind."""

    session_id: str
    active: int
    archived: int
    last_timestamp: int | None


@attrs.frozen
class StoredMessage:
    """A message with its archived flag, as export and migrate move it between backends."""

    message: Message
    archived: bool = False


@attrs.frozen(kw_only=True)
class StoredRecord:
    """A message found by its id (``get_messages_by_ids``): where it lives, and whether it
    is archived."""

    session_id: str
    message: Message
    archived: bool = False


@attrs.frozen
class HistorySnapshot:
    """The active history of a session and the identity of each message, read together.

    ``ids[i]`` names ``messages[i]``. An id is a non-empty ``str`` (so it survives JSON),
    unique within the session, and never names a different message later: a rewritten
    (``update_message_content``) message may get a new id, a deleted one's id is never
    given to a message saved afterwards.
    """

    messages: tuple[Message, ...]
    ids: tuple[str, ...]

    def __attrs_post_init__(self) -> None:
        if len(self.messages) != len(self.ids):
            raise ValueError("a HistorySnapshot needs one id per message")


@attrs.frozen(kw_only=True)
class MetadataGuard:
    """Compare-and-set of one metadata entry, applied in the same commit as the archive.

    ``expected`` is the entry's data as the caller read it (None: the entry was absent);
    ``data`` replaces it when the commit succeeds.
    """

    namespace: str
    key: str
    expected: dict[str, Any] | None
    data: dict[str, Any]


__all__ = [
    "Delete",
    "HistorySnapshot",
    "MetadataEntry",
    "MetadataGuard",
    "MetadataOp",
    "Put",
    "RecentMessageRecord",
    "RecentMessagesQuery",
    "SessionInfo",
    "StoredMessage",
    "StoredRecord",
]
