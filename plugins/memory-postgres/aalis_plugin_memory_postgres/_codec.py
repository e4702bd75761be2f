"""Rows to messages and back, and the one escape that lets any string live in a text column.

A message is stored as its JSON text (``data``, the stored timestamp filled in) plus the columns
the queries filter on. JSON text never holds a raw NUL (the encoder escapes control
characters), but session ids, metadata keys, kinds, roles and platforms are caller strings, and
PostgreSQL's ``text`` cannot hold U+0000. ``escape`` maps ``\\x00`` to ``\\x01\\x01`` and
``\\x01`` to ``\\x01\\x02``: a prefix-free, monotonic code, so escaped strings sort exactly as
the originals (what ``list_metadata`` and ``list_sessions`` promise) and ``unescape`` restores
them; strings without those two characters, all real ones, are stored as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aalis_schema_message import CONTROL_KINDS, Message

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
encode_json: Callable[[Any], str] = _encoder.encode
_loads = json.loads


def escape(value: str) -> str:
    if "\x00" not in value and "\x01" not in value:
        return value
    return value.replace("\x01", "\x01\x02").replace("\x00", "\x01\x01")


def unescape(value: str) -> str:
    if "\x01" not in value:
        return value
    out: list[str] = []
    chars = iter(value)
    for char in chars:
        if char == "\x01":
            out.append("\x00" if next(chars, "\x02") == "\x01" else "\x01")
        else:
            out.append(char)
    return "".join(out)


def check_int64(value: int, what: str) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{what} {value} does not fit in PostgreSQL's bigint")
    return value


def platform_of(message: Message) -> str | None:
    """``metadata["platform"]`` when it is a string: the value the cross-session filter matches."""
    metadata = message.metadata
    if metadata is None:
        return None
    platform = metadata.get("platform")
    return platform if isinstance(platform, str) else None


def encode_message(message: Message, timestamp: int) -> str:
    data = message.to_json()
    data["timestamp"] = timestamp
    return encode_json(data)


#: A message ready to insert: (ts, control, kind, role, platform, data, id), already escaped.
Row = tuple[int, bool, str | None, str, str | None, str, str]


def message_columns(message: Message, timestamp: int) -> Row:
    kind = message.kind
    platform = platform_of(message)
    ident = message.id
    if ident is None:  # the contract's front half names every message before it gets here
        raise ValueError("a message reaches the store without an id")
    return (
        check_int64(timestamp, "timestamp"),
        kind in CONTROL_KINDS,
        None if kind is None else escape(kind),
        escape(message.role),
        None if platform is None else escape(platform),
        encode_message(message, timestamp),
        ident,  # printable by Message's own check, so no NUL: stored as it is
    )


build_message: Callable[[Mapping[str, Any]], Message] = Message.from_stored


def decode_messages_indexed(
    texts: Sequence[str], on_corrupt: Callable[[int, str], None]
) -> list[tuple[int, Message]]:
    """Messages from stored JSON texts, each with the index of its row.

    One parser call for the whole list; a row that does not decode (edited by hand, damaged)
    is reported through ``on_corrupt`` and skipped, so one bad row never hides a session.
    """
    if not texts:
        return []
    try:
        items = _loads("[" + ",".join(texts) + "]")
        if len(items) == len(texts):
            return [(index, build_message(item)) for index, item in enumerate(items)]
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    pairs: list[tuple[int, Message]] = []
    for index, text in enumerate(texts):
        try:
            item = _loads(text)
            if not isinstance(item, dict):
                raise TypeError("not a JSON object")
            pairs.append((index, Message.from_json(item)))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            on_corrupt(index, str(exc))
    return pairs


def decode_messages(texts: Sequence[str], on_corrupt: Callable[[int, str], None]) -> list[Message]:
    return [message for _index, message in decode_messages_indexed(texts, on_corrupt)]


__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "Row",
    "check_int64",
    "decode_messages",
    "decode_messages_indexed",
    "encode_json",
    "encode_message",
    "escape",
    "message_columns",
    "platform_of",
    "unescape",
]
