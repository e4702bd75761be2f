"""Messages to rows and back.

A row stores ``Message.to_json()`` as JSON text (so no field is ever dropped and a new
``Message`` field needs no migration) plus the columns the indexes and filters need. The
message's id is in both: the JSON (so every read returns it with no extra column or work)
and the ``message_id`` column (unique, what ``get_messages_by_ids`` looks up).

Reading is the hot path of ``get_history``: decoding 50 rows one ``json.loads`` at a time
costs more than the indexed query, because each call pays a fixed set-up price. The rows of
one read are therefore joined into one JSON array and decoded with a single call, and the
messages are built by ``Message.from_stored``, which fills the slots of the frozen
``Message`` directly without re-validation (only for JSON this backend wrote itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aalis_schema_message import CONTROL_KINDS, Message

# SQLite integers are signed 64-bit; Python's are not.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
encode_json: Callable[[Any], str] = _encoder.encode


def check_int64(value: int, what: str) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{what} {value} does not fit in SQLite's signed 64-bit integers")
    return value


def platform_of(message: Message) -> str | None:
    """``metadata["platform"]`` when it is a string: the value the cross-session filter matches."""
    metadata = message.metadata
    if metadata is None:
        return None
    platform = metadata.get("platform")
    return platform if isinstance(platform, str) else None


def is_control(kind: str | None) -> int:
    return 1 if kind in CONTROL_KINDS else 0


def encode_message(message: Message, timestamp: int) -> str:
    """JSON text of ``message`` with ``timestamp`` filled in (the stored timestamp)."""
    data = message.to_json()
    data["timestamp"] = timestamp
    return encode_json(data)


#: Build a ``Message`` from JSON this backend wrote (freshly decoded, not shared).
build_message: Callable[[Mapping[str, Any]], Message] = Message.from_stored

_loads = json.loads


def decode_many(texts: Sequence[str]) -> list[Any]:
    """Decode many JSON texts with one parser call; a corrupt one raises ``ValueError``."""
    if not texts:
        return []
    return list(_loads("[" + ",".join(texts) + "]"))


def decode_messages(texts: Sequence[str], on_corrupt: Callable[[int, str], None]) -> list[Message]:
    """Messages from stored JSON texts, in order.

    A row that does not decode (edited by hand, damaged) is reported through ``on_corrupt``
    with its index and skipped, so one bad row never hides a whole session.
    """
    try:
        items = decode_many(texts)
        if len(items) == len(texts):
            return [build_message(item) for item in items]
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    messages: list[Message] = []
    for index, text in enumerate(texts):
        message = _decode_one(text, index, on_corrupt)
        if message is not None:
            messages.append(message)
    return messages


def decode_messages_indexed(
    texts: Sequence[str], on_corrupt: Callable[[int, str], None]
) -> list[tuple[int, Message]]:
    """Like ``decode_messages`` but each message keeps the index of its row."""
    try:
        items = decode_many(texts)
        if len(items) == len(texts):
            return [(index, build_message(item)) for index, item in enumerate(items)]
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    pairs: list[tuple[int, Message]] = []
    for index, text in enumerate(texts):
        message = _decode_one(text, index, on_corrupt)
        if message is not None:
            pairs.append((index, message))
    return pairs


def _decode_one(text: str, index: int, on_corrupt: Callable[[int, str], None]) -> Message | None:
    try:
        item = _loads(text)
        if not isinstance(item, dict):
            raise TypeError("not a JSON object")
        return Message.from_json(item)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        on_corrupt(index, str(exc))
        return None


#: A message ready to insert: (timestamp, control, kind, role, platform, message_id, data).
Row = tuple[int, int, str | None, str, str | None, str | None, str]


def message_columns(message: Message, timestamp: int) -> Row:
    """``(timestamp, control, kind, role, platform, message_id, data)`` for an insert.

    ``message.id`` is set on every path that writes (the contract's front half names a
    message before it reaches the backend).
    """
    return (
        check_int64(timestamp, "timestamp"),
        is_control(message.kind),
        message.kind,
        message.role,
        platform_of(message),
        message.id,
        encode_message(message, timestamp),
    )


__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "Row",
    "build_message",
    "check_int64",
    "decode_many",
    "decode_messages",
    "decode_messages_indexed",
    "encode_json",
    "encode_message",
    "is_control",
    "message_columns",
    "platform_of",
]
