"""The checked calls a memory backend's protected storage methods receive.

``MemoryBackend`` (aalis_api_memory._backend) checks and normalises every public call once for
all backends; what comes out is described here, so a backend author reads in one place what
``_get_history``, ``_archive_exact``, ``_import_messages``... may rely on and what they need
not check again (docs/backends/implementing.md).

What the protected methods may rely on (beyond the types):

* limits are a positive ``int`` below ``UNBOUNDED`` or ``math.inf`` (a limit of 0 never
  reaches them, and absurdly large ones arrive as ``math.inf``);
* a message to store comes with the timestamp to store it under: its own, or ``now_ms()``
  when it had none; and it always carries an id (its own, or a new one from
  ``new_message_id()``), which the backend stores so that every read returns it and
  ``get_messages_by_ids`` finds it; an id the store already holds must raise
  ``MessageIdConflict`` and write nothing (a unique index does it);
* metadata arrives encoded as JSON text (``encode_metadata``), with the write time;
* timestamps, roles and kinds arrive distinct, within 64 bits, and never empty (an empty
  filter arrives as None; a call that cannot match anything is answered before).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import attrs
from aalis_schema_message import Message, new_message_id, now_ms

from aalis_api_memory._exact import CheckedGuard
from aalis_api_memory._types import StoredMessage
from aalis_api_memory._validation import INT64_MAX, INT64_MIN, Limit, check_message

#: A limit this large means "everything": no store holds that many messages, and the
#: databases' own limits (SQLite, PostgreSQL, BSON) stop at int64.
UNBOUNDED = 2**62

#: One operation of a checked ``commit_metadata`` batch: ``(op, namespace, key, text)``, op
#: being "put" (text: the JSON data) or "delete" (text: None).
EncodedOp = tuple[str, str, str, str | None]


class Stamped(NamedTuple):
    """A message to store and the timestamp to store it under (its own, or the call's time)."""

    message: Message
    timestamp: int


class ImportRecord(NamedTuple):
    """A checked ``StoredMessage`` of ``import_messages``, stamped like a save."""

    message: Message
    timestamp: int
    archived: bool


@attrs.frozen(kw_only=True)
class RangeQuery:
    """A checked ``get_messages_by_session_range``, as ``_get_messages_by_session_range`` gets it.

    ``from_ts <= to_ts``, both within 64 bits (a range beyond them is clamped, one that cannot
    match is answered before); ``roles`` and ``exclude_kinds`` are None or non-empty and
    distinct. The result is capped by ``range_query_limit`` (the earliest N).
    """

    from_ts: int
    to_ts: int
    roles: tuple[str, ...] | None
    exclude_kinds: tuple[str, ...] | None


@attrs.frozen(kw_only=True)
class ExactCommit:
    """A checked ``archive_exact``, as ``_archive_exact`` gets it.

    ``ids`` are distinct and non-empty strings; ``guard`` holds the expected value normalised
    to JSON types and the new data encoded; ``marker`` is stamped like a save; ``updated_at``
    is the guard entry's write time.
    """

    ids: tuple[str, ...]
    guard: CheckedGuard
    marker: Stamped | None
    updated_at: int


@attrs.frozen(kw_only=True)
class RecentQuery:
    """A checked ``RecentMessagesQuery``, as ``_get_recent_messages_across_sessions`` gets it.

    ``limit`` is already capped by ``cross_session_max_limit``; ``roles`` are the effective
    roles; every tuple holds distinct values; ``kinds`` is None (any kind) or a non-empty
    whitelist; ``exclude_kinds`` and ``exclude_session_ids`` are None or non-empty;
    ``since_ts`` (inclusive) fits in 64 bits.
    """

    limit: int
    roles: tuple[str, ...]
    kinds: tuple[str, ...] | None
    exclude_kinds: tuple[str, ...] | None
    since_ts: int | None
    platform: str | None
    exclude_session_ids: tuple[str, ...] | None


def bounded(limit: Limit) -> Limit:
    """``limit``, or ``math.inf`` when it is at least ``UNBOUNDED``."""
    return math.inf if limit >= UNBOUNDED else limit


def distinct(values: Iterable[str] | None) -> tuple[str, ...] | None:
    """Distinct values in first-seen order; None for None and for an empty filter."""
    if not values:
        return None
    return tuple(dict.fromkeys(values))


def clamp(timestamp: int) -> int:
    """``timestamp`` brought within 64 bits (a range beyond them selects the same rows)."""
    return max(INT64_MIN, min(INT64_MAX, timestamp))


def identified(message: Message) -> Message:
    """``message`` with an id: its own, or a new one (what every store keeps)."""
    return message if message.id is not None else message.with_id(new_message_id())


def stamp(message: Message, now: int) -> Stamped:
    """``message`` with an id, and the time to store it under: its own, else ``now``."""
    return Stamped(identified(message), now if message.timestamp is None else message.timestamp)


def check_records(records: object) -> list[ImportRecord]:
    """The ``records`` of ``import_messages``, checked whole and stamped with one time."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise TypeError(
            f"records must be a sequence of StoredMessage, got {type(records).__name__}"
        )
    checked: list[ImportRecord] = []
    now = now_ms()
    for record in list(records):
        if not isinstance(record, StoredMessage):
            raise TypeError(f"records must hold StoredMessage items, got {type(record).__name__}")
        message = identified(check_message(record.message))
        if not isinstance(record.archived, bool):
            raise TypeError(
                f"StoredMessage.archived must be a bool, got {type(record.archived).__name__}"
            )
        timestamp = message.timestamp if message.timestamp is not None else now
        checked.append(ImportRecord(message, timestamp, record.archived))
    return checked


__all__ = [
    "UNBOUNDED",
    "EncodedOp",
    "ExactCommit",
    "ImportRecord",
    "RangeQuery",
    "RecentQuery",
    "Stamped",
    "bounded",
    "check_records",
    "clamp",
    "distinct",
    "identified",
    "stamp",
]
