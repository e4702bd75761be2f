"""The conversation ``Message`` every Aalis contract and backend stores and returns.

Messages are frozen and keyword-only so a stored message can be shared without defensive
copies of the scalar fields; the JSON-like fields (``metadata``, ``segments``, ``images``,
``audios``) are deep-copied on construction so that a caller mutating the dict it passed in
never changes a message that was already built (and, through it, what a backend stored).
"""

from __future__ import annotations

import copy
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

#: Kinds that mark events rather than conversation (turn records, compression dividers).
#: They are never sent to a model and never counted by count-based reads.
CONTROL_KINDS: frozenset[str] = frozenset({"event-marker"})

#: Roles with a conventional meaning; ``role`` itself is an open set.
WELL_KNOWN_ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool", "notice"})

JSON = Any
"""A JSON value: None, bool, int, float, str, list of JSON or dict of str to JSON."""


def now_ms() -> int:
    """Current wall-clock time in epoch milliseconds, the unit of every Aalis timestamp."""
    return time.time_ns() // 1_000_000


#: Crockford's base 32 (no I, L, O, U): the alphabet of ULIDs, so ids sort as they were made.
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ID_LOCK = threading.Lock()
_last_id: list[int] = [0, 0]  # [milliseconds, random part] of the newest id of this process


def _pairs() -> tuple[str, ...]:
    return tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)


#: Every two-character run of the alphabet, indexed by 10 bits: half the lookups of one
#: character at a time, on a path every save takes.
_PAIRS = _pairs()


def new_message_id() -> str:
    """A new message id: a ULID, 26 characters, time-ordered and collision-free.

    48 bits of epoch milliseconds then 80 random bits, in Crockford base 32, so ids sort in
    the order they were made and two processes (or machines) never draw the same one. Within
    one millisecond of one process the random part is incremented rather than drawn again,
    so ids made in a row still sort in order (the ULID "monotonic" rule), and a burst of
    saves reads the system's randomness once per millisecond. Ids are opaque to every
    reader: nothing may parse a time out of them (docs/reference/memory-contract.md,
    "Message identity").
    """
    ms = time.time_ns() // 1_000_000
    with _ID_LOCK:
        if ms <= _last_id[0]:
            ms = _last_id[0]
            rand = (_last_id[1] + 1) & _RANDOM_MASK
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last_id[0], _last_id[1] = ms, rand
    value = (ms << 80) | rand
    pairs = _PAIRS
    # 128 bits in 26 characters: the first pair holds the top 8 bits, twelve more the rest.
    return "".join([pairs[value >> 120]] + [pairs[(value >> s) & 1023] for s in _SHIFTS])


_RANDOM_MASK = (1 << 80) - 1
_SHIFTS = tuple(range(110, -1, -10))


def _message_id(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"Message.id must be a str or None, got {type(value).__name__}")
    if not value or len(value) > 128 or not value.isprintable() or value != value.strip():
        raise ValueError(
            f"Message.id must be 1-128 printable characters without surrounding blanks, "
            f"got {value!r}"
        )


def _optional_str(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"Message.{attribute.name} must be a str or None, got {type(value).__name__}"
        )


def _required_str(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(
            f"{type(inst).__name__}.{attribute.name} must be a str, got {type(value).__name__}"
        )


def _timestamp(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Message.timestamp must be an int (epoch ms) or None, got {value!r}")


def _check_json(value: object, where: str, depth: int = 0) -> None:
    if depth > 200:
        raise ValueError(f"{where} is nested too deeply")
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{where} holds a non-finite float, which JSON cannot carry")
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_json(item, where, depth + 1)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where} has a non-str key {key!r}")
            _check_json(item, where, depth + 1)
        return
    raise TypeError(f"{where} holds {type(value).__name__}, which is not a JSON type")


def _to_plain(value: Any) -> Any:
    """Deep copy into plain JSON containers (dict / list)."""
    if isinstance(value, Mapping):
        return {key: _to_plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_plain(item) for item in value]
    return value


def _json_tuple(value: Sequence[JSON] | None) -> tuple[JSON, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise TypeError(f"expected a sequence of JSON values, got {type(value).__name__}")
    _check_json(list(value), "message field")
    return tuple(_to_plain(item) for item in value)


def _json_object(value: Mapping[str, JSON] | None) -> dict[str, JSON] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"Message.metadata must be a mapping or None, got {type(value).__name__}")
    _check_json(value, "Message.metadata")
    return dict(_to_plain(value))


@attrs.frozen(kw_only=True)
class ToolCall:
    """One function call requested by an assistant turn; ``arguments`` is the raw JSON text."""

    id: str = attrs.field(validator=_required_str)
    name: str = attrs.field(validator=_required_str)
    arguments: str = attrs.field(validator=_required_str)

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCall:
        if not isinstance(data, Mapping):
            raise TypeError(f"a tool call must be an object, got {type(data).__name__}")
        unknown = set(data) - {"id", "name", "arguments"}
        if unknown:
            raise ValueError(f"unknown tool call field(s): {', '.join(sorted(unknown))}")
        # Validators refuse missing/non-str values with a TypeError naming the field.
        return cls(id=data.get("id"), name=data.get("name"), arguments=data.get("arguments"))  # type: ignore[arg-type]


def _tool_calls(
    value: Sequence[ToolCall | Mapping[str, Any]] | None,
) -> tuple[ToolCall, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise TypeError("Message.tool_calls must be a sequence of ToolCall")
    return tuple(item if isinstance(item, ToolCall) else ToolCall.from_json(item) for item in value)


_FIELDS_IN_ORDER = (
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "kind",
    "timestamp",
    "reasoning_content",
    "segments",
    "images",
    "audios",
    "metadata",
    "id",
)


@attrs.frozen(kw_only=True, slots=False)
class Message:
    """One turn (or event marker) of a conversation. No backend drops any field.

    Deliberately not slotted: backends rebuild every message of every read, and with an
    instance ``__dict__`` ``from_stored`` fills all thirteen fields with one dict merge instead
    of twelve slot stores (about 2.5x faster per message; figures in docs/backends/sqlite.md).
    """

    role: str = attrs.field(validator=_required_str)
    content: str | None = attrs.field(default=None, validator=_optional_str)
    tool_calls: tuple[ToolCall, ...] | None = attrs.field(default=None, converter=_tool_calls)
    tool_call_id: str | None = attrs.field(default=None, validator=_optional_str)
    name: str | None = attrs.field(default=None, validator=_optional_str)
    kind: str | None = attrs.field(default=None, validator=_optional_str)
    timestamp: int | None = attrs.field(default=None, validator=_timestamp)
    reasoning_content: str | None = attrs.field(default=None, validator=_optional_str)
    segments: tuple[JSON, ...] | None = attrs.field(default=None, converter=_json_tuple)
    images: tuple[JSON, ...] | None = attrs.field(default=None, converter=_json_tuple)
    audios: tuple[JSON, ...] | None = attrs.field(default=None, converter=_json_tuple)
    metadata: dict[str, JSON] | None = attrs.field(default=None, converter=_json_object)
    #: The message's identity in the store: assigned at save when None, kept when set,
    #: unique in the store, unchanged by archiving, rewriting and compression
    #: (docs/reference/memory-contract.md, "Message identity").
    id: str | None = attrs.field(default=None, validator=_message_id)

    @property
    def is_control(self) -> bool:
        """True for event markers, which are never sent to a model nor counted."""
        return self.kind in CONTROL_KINDS

    def with_timestamp(self, timestamp: int) -> Message:
        return attrs.evolve(self, timestamp=timestamp)

    def with_id(self, message_id: str) -> Message:
        """This message under ``message_id``: what a store does to a message saved without one.

        Only the id is checked: every other field was checked when ``self`` was built, so
        the copy takes them as they are (a third of ``attrs.evolve``'s cost on the save
        path). The JSON containers (``metadata``, ``segments`` ...) are shared with
        ``self``; stores serialise or copy what they keep, so nothing stored is shared.
        """
        _message_id(self, _ID_FIELD, message_id)
        inst = object.__new__(type(self))
        _set_dict(inst, "__dict__", {**self.__dict__, "id": message_id})
        return inst

    def copy(self) -> Message:
        """A deep copy, so a caller mutating ``metadata`` of the copy changes nothing else."""
        return attrs.evolve(self)

    def to_json(self) -> dict[str, JSON]:
        """A dict of JSON types with snake_case keys; fields that are None are omitted."""
        out: dict[str, JSON] = {}
        for field in _FIELDS_IN_ORDER:
            value = getattr(self, field)
            if value is None:
                continue
            if field == "tool_calls":
                out[field] = [call.to_json() for call in value]
            elif field in ("segments", "images", "audios", "metadata"):
                out[field] = _to_plain(value)
            else:
                out[field] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Message:
        """Read back what ``to_json`` wrote; unknown keys are refused, not silently dropped."""
        if not isinstance(data, Mapping):
            raise TypeError(f"a message must be a JSON object, got {type(data).__name__}")
        unknown = set(data) - set(_FIELDS_IN_ORDER)
        if unknown:
            raise ValueError(f"unknown message field(s): {', '.join(sorted(map(str, unknown)))}")
        if "role" not in data:
            raise ValueError("a message needs a 'role'")
        return cls(**{key: copy.deepcopy(value) for key, value in data.items()})

    @classmethod
    def from_stored(cls, data: Mapping[str, JSON]) -> Message:
        """Build from JSON a backend wrote itself, skipping validation (the hot read path).

        Only for data that came out of ``to_json`` and was decoded fresh (so nothing else
        holds a reference to its containers); anything from outside goes through
        ``from_json``. Backends call this for every message of every read, so it adopts the
        decoded fields as the instance's ``__dict__`` in one merge.
        """
        inst = object.__new__(cls)
        fields = {**_ABSENT, **data}
        calls = fields["tool_calls"]
        if calls is not None:
            fields["tool_calls"] = tuple([ToolCall(**call) for call in calls])
        # Unrolled: this runs for every message of every read.
        if fields["segments"] is not None:
            fields["segments"] = tuple(fields["segments"])
        if fields["images"] is not None:
            fields["images"] = tuple(fields["images"])
        if fields["audios"] is not None:
            fields["audios"] = tuple(fields["audios"])
        _set_dict(inst, "__dict__", fields)
        return inst


_ID_FIELD = attrs.fields(Message).id

#: Every field but ``role`` at its absent value: the base ``from_stored`` merges data into.
_ABSENT: dict[str, None] = {field: None for field in _FIELDS_IN_ORDER if field != "role"}
# A frozen class refuses ``inst.__dict__ = ...``; object's own __setattr__ is what attrs uses
# in a frozen __init__ too.
_set_dict = object.__setattr__


__all__ = [
    "CONTROL_KINDS",
    "JSON",
    "WELL_KNOWN_ROLES",
    "Message",
    "ToolCall",
    "new_message_id",
    "now_ms",
]
