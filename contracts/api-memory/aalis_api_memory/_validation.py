"""Input checks every backend runs before touching storage.

Sharing them is what makes "bad input gets a clear error and changes nothing" identical across
backends: the conformance kit asserts the exception type, and a backend that validated on its
own would drift (SQLite silently accepting ``2.0`` as a limit, MongoDB treating a dict session
id as a query operator).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aalis_schema_message import Message

from aalis_api_memory._types import Delete, MetadataOp, Put, RecentMessagesQuery

DEFAULT_HISTORY_LIMIT = 50
DEFAULT_FULL_HISTORY_LIMIT = 200
DEFAULT_RECENT_LIMIT = 100
DEFAULT_RANGE_QUERY_LIMIT = 500
DEFAULT_CROSS_SESSION_MAX_LIMIT = 1000

Limit = int | float

#: Bounds of a stored timestamp: every backend keeps it in a signed 64-bit integer
#: (SQLite INTEGER, BSON int64), so the in-memory store refuses the same values.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def check_text(value: str, what: str) -> str:
    """Refuse a str that is not valid Unicode text (a lone surrogate such as ``"\\ud800"``).

    **[decided]** Such strings cannot be encoded as UTF-8, so no backend could store them
    (SQLite and BSON both need UTF-8) and an export could not write them. Every backend
    refuses them the same way, with a ``ValueError``, before anything is written.
    """
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} is not valid text: lone surrogate at index {exc.start} cannot be stored"
        ) from None
    return value


def _check_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    return check_text(value, what)


def _check_json_text(value: Any, what: str, depth: int = 0) -> None:
    # Strings anywhere in a JSON-like value (keys included) must be storable text.
    if isinstance(value, str):
        check_text(value, what)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                check_text(key, what)
            _check_json_text(item, what, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_json_text(item, what, depth + 1)


def check_session_id(value: object) -> str:
    return _check_str(value, "session id")


def check_namespace(value: object) -> str:
    return _check_str(value, "metadata namespace")


def check_key(value: object) -> str:
    return _check_str(value, "metadata key")


def check_limit(value: object, default: int, what: str = "limit") -> Limit:
    """A non-negative int or ``math.inf``; None means ``default``.

    ``2.0`` is refused on purpose: a float that happens to be whole usually means a caller
    computed it, and silently truncating a computed limit hides the bug.
    """
    if value is None:
        return default
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a non-negative int or math.inf, got a bool")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what} must be a non-negative int or math.inf, got {value}")
        return value
    if isinstance(value, float):
        if value == math.inf:
            return math.inf
        raise ValueError(f"{what} must be a non-negative int or math.inf, got {value!r}")
    raise TypeError(f"{what} must be a non-negative int or math.inf, got {type(value).__name__}")


def check_count(value: object, what: str = "count") -> Limit:
    """``archive_span``'s count: like a limit, but required (None is a ``TypeError``)."""
    if value is None:
        raise TypeError(f"{what} must be a non-negative int or math.inf, got None")
    return check_limit(value, 0, what)


def check_keep(keep: object) -> frozenset[int]:
    """Positions to keep in an archived span; duplicates count once."""
    if isinstance(keep, (str, bytes, Mapping)) or not isinstance(keep, Iterable):
        raise TypeError(f"keep must be a sequence of non-negative ints, got {type(keep).__name__}")
    positions: set[int] = set()
    for position in keep:
        if isinstance(position, bool) or not isinstance(position, int):
            raise TypeError(f"keep positions must be ints, got {position!r}")
        if position < 0:
            raise ValueError(f"keep positions must be non-negative, got {position}")
        positions.add(position)
    return frozenset(positions)


def check_timestamp(value: object, what: str = "timestamp") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int (epoch ms), got {value!r}")
    return value


def check_stored_timestamp(value: object, what: str = "timestamp") -> int:
    """A timestamp that will be stored: an int that fits in 64 bits."""
    checked = check_timestamp(value, what)
    if not INT64_MIN <= checked <= INT64_MAX:
        raise ValueError(
            f"{what} {checked} does not fit in 64 bits (a signed 64-bit integer of epoch milliseconds)"
        )
    return checked


def check_timestamps(values: object) -> list[int]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"timestamps must be a sequence of ints, got {type(values).__name__}")
    return [check_timestamp(value) for value in values]


#: Ids one ``get_messages_by_ids`` / ``delete_messages_by_ids`` call may name: a recall
#: checks a page of hits, an undo a turn; more is a batch the caller splits.
MAX_IDS_PER_CALL = 10_000


def check_message_ids(values: object) -> tuple[str, ...]:
    """A sequence of message ids (non-empty str), duplicates once, in first-seen order."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"ids must be a sequence of str, got {type(values).__name__}")
    out: dict[str, None] = {}
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"message ids are str, got {type(value).__name__}")
        if not value:
            raise ValueError("a message id is never empty")
        check_text(value, "a message id")
        out[value] = None
    if len(out) > MAX_IDS_PER_CALL:
        raise ValueError(f"at most {MAX_IDS_PER_CALL} ids per call, got {len(out)}")
    return tuple(out)


def check_str_filter(values: object, what: str) -> tuple[str, ...] | None:
    """A whitelist/blacklist of strings; None passes through."""
    if values is None:
        return None
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"{what} must be a sequence of str or None, got {type(values).__name__}")
    items = tuple(values)
    for item in items:
        _check_str(item, f"each of {what}")
    return items


_MESSAGE_TEXT_FIELDS = ("role", "content", "tool_call_id", "name", "kind", "reasoning_content")
_MESSAGE_JSON_FIELDS = ("segments", "images", "audios", "metadata")


def check_message(message: object) -> Message:
    """A ``Message`` whose every string is storable text (see ``check_text``)."""
    if not isinstance(message, Message):
        raise TypeError(
            f"message must be an aalis_schema_message.Message, got {type(message).__name__}"
        )
    if message.timestamp is not None:
        check_stored_timestamp(message.timestamp, "Message.timestamp")
    for field in _MESSAGE_TEXT_FIELDS:
        value = getattr(message, field)
        if value is not None:
            check_text(value, f"Message.{field}")
    if message.tool_calls:
        for call in message.tool_calls:
            check_text(call.id, "ToolCall.id")
            check_text(call.name, "ToolCall.name")
            check_text(call.arguments, "ToolCall.arguments")
    for field in _MESSAGE_JSON_FIELDS:
        value = getattr(message, field)
        if value is not None:
            _check_json_text(value, f"Message.{field}")
    return message


def check_replacement(old_text: object, new_text: object) -> tuple[str, str]:
    old = _check_str(old_text, "old_text")
    new = _check_str(new_text, "new_text")
    if old == "":
        raise ValueError("old_text must not be empty (it would match between every character)")
    return old, new


def check_recent_query(query: object) -> RecentMessagesQuery:
    if not isinstance(query, RecentMessagesQuery):
        raise TypeError(f"query must be a RecentMessagesQuery, got {type(query).__name__}")
    check_limit(query.limit, DEFAULT_HISTORY_LIMIT, "query.limit")
    check_str_filter(query.roles, "query.roles")
    check_str_filter(query.kinds, "query.kinds")
    check_str_filter(query.exclude_kinds, "query.exclude_kinds")
    check_str_filter(query.exclude_session_ids, "query.exclude_session_ids")
    if query.since_ts is not None:
        check_timestamp(query.since_ts, "query.since_ts")
    if query.platform is not None:
        _check_str(query.platform, "query.platform")
    return query


def _check_json_keys(value: Any, depth: int = 0) -> None:
    # json.dumps would silently turn int/None/bool keys into strings; refuse them instead.
    if depth > 500:
        raise ValueError("metadata data is nested too deeply")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"metadata data keys must be str, got {key!r}")
            _check_json_keys(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_json_keys(item, depth + 1)


def _reject(value: object) -> Any:
    raise TypeError(f"metadata data holds {type(value).__name__}, which is not a JSON type")


def encode_metadata(data: object) -> str:
    """Serialise ``data`` to JSON text, refusing anything that would not read back equal."""
    if not isinstance(data, dict):
        raise TypeError(f"metadata data must be a dict (a JSON object), got {type(data).__name__}")
    try:
        _check_json_keys(data)
        text = json.dumps(
            data, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_reject
        )
    except RecursionError as exc:
        raise ValueError("metadata data is nested too deeply") from exc
    # ValueError also covers circular data ("Circular reference detected") and NaN/inf.
    return check_text(text, "metadata data")


def decode_metadata(text: object) -> dict[str, Any] | None:
    """Stored JSON text -> dict; None for anything unreadable (corrupt, or not an object)."""
    if not isinstance(text, (str, bytes)):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def encode_batch(ops: object) -> list[tuple[str, str, str, str | None]]:
    """Validate and serialise a whole ``commit_metadata`` batch before anything is written.

    Returns ``(op, namespace, key, json_text_or_None)`` tuples in order, ``op`` being "put"
    or "delete".
    """
    if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
        raise TypeError(f"ops must be a sequence of Put/Delete, got {type(ops).__name__}")
    encoded: list[tuple[str, str, str, str | None]] = []
    for op in ops:
        if isinstance(op, Put):
            namespace, key = check_namespace(op.namespace), check_key(op.key)
            encoded.append(("put", namespace, key, encode_metadata(op.data)))
        elif isinstance(op, Delete):
            encoded.append(("delete", check_namespace(op.namespace), check_key(op.key), None))
        else:
            raise TypeError(f"metadata ops must be Put or Delete, got {type(op).__name__}")
    return encoded


def take_last(items: Sequence[Any], limit: Limit) -> list[Any]:
    """The last ``limit`` items (all for inf, none for 0)."""
    if limit == math.inf:
        return list(items)
    count = int(limit)
    return list(items[-count:]) if count else []


__all__ = [
    "DEFAULT_CROSS_SESSION_MAX_LIMIT",
    "DEFAULT_FULL_HISTORY_LIMIT",
    "DEFAULT_HISTORY_LIMIT",
    "DEFAULT_RANGE_QUERY_LIMIT",
    "DEFAULT_RECENT_LIMIT",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_IDS_PER_CALL",
    "Limit",
    "MetadataOp",
    "check_count",
    "check_keep",
    "check_key",
    "check_limit",
    "check_message",
    "check_message_ids",
    "check_namespace",
    "check_recent_query",
    "check_replacement",
    "check_session_id",
    "check_stored_timestamp",
    "check_str_filter",
    "check_text",
    "check_timestamp",
    "check_timestamps",
    "decode_metadata",
    "encode_batch",
    "encode_metadata",
    "take_last",
]
