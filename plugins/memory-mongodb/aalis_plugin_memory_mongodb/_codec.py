"""How JSON values, filter strings and messages become BSON documents, and back.

Three problems are solved here, once, so the store never thinks about them:

* **Keys.** Message metadata and metadata ``data`` are arbitrary JSON objects, and their keys
  may hold ``.``, a leading ``$`` or NUL. MongoDB before 5.0 refuses such field names, 5.0+
  accepts them with caveats (update operators and queries cannot address them), and BSON
  cannot carry NUL in a key at all. Every key is therefore escaped reversibly: ``%`` ->
  ``%25``, ``.`` -> ``%2E``, ``$`` -> ``%24``, NUL -> ``%00``. Ordinary keys are unchanged, so
  the documents stay readable in ``mongosh``.
* **Integers and depth.** JSON (and Python) integers are unbounded, BSON stops at 64 bits: a
  larger integer is stored as ``{"%int": "<decimal>"}``. MongoDB refuses documents nested
  more than 100 levels, while the contract accepts deeper JSON: a subtree deeper than
  ``FOLD_DEPTH`` is stored as ``{"%json": "<JSON text>"}``. No escaped user key can be
  ``%int`` or ``%json`` (a user's ``%`` is always ``%25``), so the markers are unambiguous.
* **Filter strings.** Session ids, namespaces, keys, roles, kinds and platforms are matched by
  equality. Strings holding NUL (which the nx-27017 test server cannot match, and which some
  drivers and tools truncate) or lone surrogates (which UTF-8, hence BSON, cannot carry) are
  stored as ``U+FDD0`` followed by their JSON-escaped ASCII form; every other string is stored
  as is. A string that itself starts with ``U+FDD0`` (a Unicode non-character) is escaped too,
  so the mapping is injective and a lookup by the escaped value finds exactly that string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import bson
from aalis_api_memory import StoredDataError
from aalis_schema_message import Message
from bson import ObjectId
from bson.raw_bson import RawBSONDocument

#: Largest and smallest integers BSON stores natively (int64).
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
#: The marker key of an integer too large for int64.
BIG_INT_KEY = "%int"
#: Leading character of an escaped filter string (a Unicode non-character).
ESCAPE_MARK = "\ufdd0"
#: The marker key of a subtree kept as JSON text because it is nested too deeply.
FOLDED_KEY = "%json"
#: Container depth (inside ``body``/``data``) beyond which a subtree is stored as JSON text;
#: MongoDB's limit is 100 levels for the whole document.
FOLD_DEPTH = 48

_KEY_ESCAPES = {"%": "%25", ".": "%2E", "$": "%24", "\x00": "%00"}
_KEY_NEEDS_ESCAPE = re.compile(r"[%.$\x00]")
_KEY_ESCAPED = re.compile(r"%(25|2E|24|00)")
_KEY_UNESCAPES = {"25": "%", "2E": ".", "24": "$", "00": "\x00"}


def escape_key(key: str) -> str:
    if _KEY_NEEDS_ESCAPE.search(key) is None:
        return key
    return _KEY_NEEDS_ESCAPE.sub(lambda m: _KEY_ESCAPES[m.group(0)], key)


def unescape_key(key: str) -> str:
    if "%" not in key:
        return key
    return _KEY_ESCAPED.sub(lambda m: _KEY_UNESCAPES[m.group(1)], key)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fold(value: Any, where: str) -> dict[str, str]:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except RecursionError:
        raise ValueError(f"{where} is nested too deeply") from None
    except TypeError as exc:
        raise TypeError(f"{where} holds a value that is not JSON: {exc}") from None
    if not _is_utf8(text):
        raise ValueError(f"{where} holds a string that is not valid Unicode (a lone surrogate)")
    return {FOLDED_KEY: text}


def encode_json(value: Any, where: str = "value", depth: int = 0) -> Any:
    """A JSON value -> a BSON-storable value (fresh containers, escaped keys, markers).

    Raises ``ValueError`` for what BSON cannot hold (lone surrogates) and ``TypeError`` for
    what JSON cannot hold, so a bad value is refused before anything is sent.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if INT64_MIN <= value <= INT64_MAX:
            return int(value)
        return {BIG_INT_KEY: str(int(value))}
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{where} holds a non-finite float, which JSON cannot carry")
        return value
    if isinstance(value, str):
        if not _is_utf8(value):
            raise ValueError(f"{where} holds a string that is not valid Unicode (a lone surrogate)")
        return value
    if isinstance(value, (list, tuple)):
        if depth >= FOLD_DEPTH:
            return _fold(value, where)
        return [encode_json(item, where, depth + 1) for item in value]
    if isinstance(value, Mapping):
        if depth >= FOLD_DEPTH:
            return _fold(value, where)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where} has a non-str key {key!r}")
            if not _is_utf8(key):
                raise ValueError(f"{where} has a key that is not valid Unicode (a lone surrogate)")
            out[escape_key(key)] = encode_json(item, where, depth + 1)
        return out
    raise TypeError(f"{where} holds {type(value).__name__}, which is not a JSON type")


def decode_json(value: Any) -> Any:
    """The inverse of ``encode_json``; raises ``StoredDataError`` on what it never writes."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # bson.Int64 -> int, so values compare and serialise plainly
    if isinstance(value, float):
        return value
    if isinstance(value, list):
        return [decode_json(item) for item in value]
    if isinstance(value, Mapping):
        if len(value) == 1:
            if BIG_INT_KEY in value:
                return _decode_big_int(value[BIG_INT_KEY])
            if FOLDED_KEY in value:
                return _decode_folded(value[FOLDED_KEY])
        return {unescape_key(str(key)): decode_json(item) for key, item in value.items()}
    raise StoredDataError(f"stored value of BSON type {type(value).__name__} is not JSON")


def _decode_big_int(digits: Any) -> int:
    if not isinstance(digits, str):
        raise StoredDataError("malformed big-integer marker")
    try:
        return int(digits)
    except ValueError:
        raise StoredDataError("malformed big-integer marker") from None


def _decode_folded(text: Any) -> Any:
    if not isinstance(text, str):
        raise StoredDataError("malformed folded JSON marker")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise StoredDataError("malformed folded JSON marker") from None


def escape_str(text: str) -> str:
    """A filter string -> its stored form (unchanged unless it holds NUL or is not UTF-8)."""
    if "\x00" not in text and not text.startswith(ESCAPE_MARK) and _is_utf8(text):
        return text
    return ESCAPE_MARK + json.dumps(text, ensure_ascii=True)[1:-1]


def unescape_str(stored: Any) -> str:
    if not isinstance(stored, str):
        raise StoredDataError(f"expected a stored string, got {type(stored).__name__}")
    if not stored.startswith(ESCAPE_MARK):
        return stored
    try:
        value = json.loads('"' + stored[len(ESCAPE_MARK) :] + '"')
    except ValueError:
        raise StoredDataError("malformed escaped string") from None
    if not isinstance(value, str):  # pragma: no cover - json.loads of a quoted string
        raise StoredDataError("malformed escaped string")
    return value


def escape_optional(text: str | None) -> str | None:
    return None if text is None else escape_str(text)


#: MongoDB's document size limit (``maxBsonObjectSize`` of every supported server).
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024


def encode_document(doc: Mapping[str, Any], what: str) -> RawBSONDocument:
    """Encode ``doc`` once, refusing what the server would refuse, before anything is sent."""
    try:
        raw = bson.encode(doc)
    except (bson.errors.InvalidDocument, OverflowError, UnicodeEncodeError) as exc:
        raise ValueError(f"{what} cannot be stored in MongoDB: {exc}") from None
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise ValueError(
            f"{what} is {len(raw)} bytes as BSON; MongoDB stores at most {MAX_DOCUMENT_BYTES} bytes"
            " per document"
        )
    return RawBSONDocument(raw)


# Message fields kept at the top level of a document (for filters and indexes) rather than in
# the body; everything else of ``Message.to_json()`` lives in ``body``. The message id is the
# document's ``_id`` (docs/backends/mongodb.md, "Message ids").
_TOP_LEVEL_FIELDS = ("role", "kind", "timestamp", "id")


def id_of(doc_id: object) -> str:
    """The message id of a document: its ``_id``, as text.

    A message saved since ids exist has its id as ``_id``; one stored before has an ObjectId
    there, and reads with it as 24 hex digits: the same on every read, and never what
    ``new_message_id`` makes (26 characters), so no new id equals it by accident.
    """
    return doc_id if isinstance(doc_id, str) else str(doc_id)


def derived_object_id(message_id: str) -> ObjectId | None:
    """The ``_id`` a stored-before-ids message would need to read as ``message_id``, if any."""
    if len(message_id) != 24 or not ObjectId.is_valid(message_id):
        return None
    oid = ObjectId(message_id)
    return oid if str(oid) == message_id else None


def platform_of(message: Message) -> str | None:
    """The filterable platform: ``metadata["platform"]`` when it is a string."""
    if message.metadata is None:
        return None
    platform = message.metadata.get("platform")
    return platform if isinstance(platform, str) else None


def message_document(
    session_id: str, message: Message, timestamp: int, archived: bool
) -> dict[str, Any]:
    """The document of one message, keyed by its id, without ``seq`` (allocated at insert).

    ``timestamp`` is the stored one (the message's own, or "now" for a message without one).
    """
    if not INT64_MIN <= timestamp <= INT64_MAX:
        raise ValueError(f"message timestamp {timestamp} does not fit in 64 bits")
    body = message.to_json()
    for name in _TOP_LEVEL_FIELDS:
        body.pop(name, None)
    if message.id is None:  # the contract's front half names every message before it gets here
        raise ValueError("a message reaches the store without an id")
    return {
        "_id": message.id,  # printable by Message's own check: valid UTF-8, no NUL
        "session_id": escape_str(session_id),
        "timestamp": timestamp,
        "archived": archived,
        "role": escape_str(message.role),
        "kind": escape_optional(message.kind),
        "platform": escape_optional(platform_of(message)),
        "body": encode_json(body, "message"),
    }


def document_message(doc: Mapping[str, Any]) -> Message:
    """A stored document -> the ``Message`` that was saved (with its stored timestamp)."""
    body = doc.get("body")
    if not isinstance(body, Mapping):
        raise StoredDataError("message document has no body object")
    data = decode_json(body)
    data["role"] = unescape_str(doc.get("role"))
    kind = doc.get("kind")
    if kind is not None:
        data["kind"] = unescape_str(kind)
    data["timestamp"] = int(doc["timestamp"])
    data["id"] = id_of(doc["_id"])
    return Message.from_stored(data)


__all__ = [
    "BIG_INT_KEY",
    "ESCAPE_MARK",
    "FOLDED_KEY",
    "FOLD_DEPTH",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_DOCUMENT_BYTES",
    "StoredDataError",
    "decode_json",
    "derived_object_id",
    "document_message",
    "encode_document",
    "encode_json",
    "escape_key",
    "escape_optional",
    "escape_str",
    "id_of",
    "message_document",
    "platform_of",
    "unescape_key",
    "unescape_str",
]
