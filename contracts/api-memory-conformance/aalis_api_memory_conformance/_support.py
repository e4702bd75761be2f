"""Helpers shared by the conformance mixins: message builders, snapshots, a reference model.

Kept out of the test classes so every mixin states its rule in a few lines and the
reference reading of the trickier rules (the get_history window, archive positions) exists
exactly once.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs
import pytest
from aalis_api_memory import (
    DEFAULT_CROSS_SESSION_MAX_LIMIT,
    DEFAULT_RANGE_QUERY_LIMIT,
    FullMemoryService,
    StoredMessage,
)
from aalis_schema_message import CONTROL_KINDS, Message, ToolCall, new_message_id

#: A fixed, realistic epoch-ms base so tests never depend on the clock.
T0 = 1_700_000_000_000
MARKER = next(iter(sorted(CONTROL_KINDS)))
INF = math.inf

C = TypeVar("C", bound=type)


def conformance(cls: C) -> C:
    """Mark every async ``test_*`` of a mixin with ``pytest.mark.asyncio``.

    Explicit marks (rather than relying on ``asyncio_mode = "auto"``) let a backend author
    run the kit under pytest-asyncio's default strict mode, and a per-function mark survives
    a subclass that sets its own ``pytestmark`` (a skipif for a missing server, say).
    """
    for name, value in list(vars(cls).items()):
        if name.startswith("test_") and inspect.iscoroutinefunction(value):
            setattr(cls, name, pytest.mark.asyncio(value))
    return cls


def msg(
    content: str | None = "x",
    *,
    role: str = "user",
    ts: int | None = None,
    kind: str | None = None,
    **fields: Any,
) -> Message:
    """A message stamped ``T0 + ts`` (unstamped when ``ts`` is None), with an id of its own.

    The id is set here, as ``save_conversation`` sets it, so a message read back equals the
    one saved; pass ``id=None`` for a message the store must name itself.
    """
    timestamp = None if ts is None else T0 + ts
    fields.setdefault("id", new_message_id())
    return Message(role=role, content=content, kind=kind, timestamp=timestamp, **fields)


def without_ids(messages: Sequence[Message]) -> list[Message]:
    """The messages with their ids taken away: for comparing with messages saved without one."""
    return [attrs.evolve(m, id=None) for m in messages]


def marker(content: str = "marker", *, ts: int | None = None) -> Message:
    return msg(content, role="notice", kind=MARKER, ts=ts)


def full_message(ts: int | None = 0) -> Message:
    """A message with every field set, nested JSON included."""
    return msg(
        "full content",
        role="assistant",
        ts=ts,
        kind="reply",
        tool_calls=(
            ToolCall(id="call-1", name="search", arguments='{"q": "tea", "n": 3}'),
            ToolCall(id="call-2", name="clock", arguments="{}"),
        ),
        tool_call_id="tc-0",
        name="helper",
        reasoning_content="because the user asked",
        segments=({"type": "text", "text": "hi"}, {"type": "at", "user": "42"}),
        images=("https://example.invalid/a.png", {"url": "b.jpg", "w": 10, "h": 20.5}),
        audios=({"url": "a.ogg", "seconds": 1.5, "tags": ["x", None, True]},),
        metadata={"platform": "qq", "nested": {"list": [1, 2.5, {"x": None}], "flag": False}},
    )


def texts(messages: Sequence[Message]) -> list[str | None]:
    return [message.content for message in messages]


def stamped(message: Message, timestamp: int) -> Message:
    return attrs.evolve(message, timestamp=timestamp)


def has(memory: object, *methods: str) -> bool:
    """Whether the store has every one of ``methods`` (for optional checks inside a test)."""
    return all(callable(getattr(memory, method, None)) for method in methods)


def require(memory: object, *methods: str) -> None:
    """Skip the calling test, with the reason, when the store lacks an optional method.

    Knows nothing of declarations: the kit's tests call ``ConformanceBase.require``, which
    fails instead when the test class declares the method's group in ``implements``.
    """
    missing = [method for method in methods if not callable(getattr(memory, method, None))]
    if missing:
        pytest.skip(f"optional method(s) not implemented by this backend: {', '.join(missing)}")


def range_query_limit(memory: object) -> int:
    """The store's configured range cap (``range_query_limit`` attribute), default 500."""
    return int(getattr(memory, "range_query_limit", DEFAULT_RANGE_QUERY_LIMIT))


def cross_session_max_limit(memory: object) -> int:
    """The store's configured cross-session cap (``cross_session_max_limit``), default 1000."""
    return int(getattr(memory, "cross_session_max_limit", DEFAULT_CROSS_SESSION_MAX_LIMIT))


async def history_state(
    memory: FullMemoryService, session_id: str
) -> tuple[list[Message], list[Message] | None, list[StoredMessage] | None]:
    """Everything observable about one session, to assert that a refused call changed nothing."""
    active = await memory.get_history(session_id, INF)
    full = (
        await memory.get_full_history(session_id, INF) if has(memory, "get_full_history") else None
    )
    exported = await memory.export_session(session_id) if has(memory, "export_session") else None
    return (active, full, exported)


async def metadata_state(
    memory: FullMemoryService, namespace: str
) -> tuple[list[tuple[str, dict[str, Any]]], list[str] | None]:
    """Every entry of one namespace (keys, data), without the write times."""
    entries = [(entry.key, entry.data) for entry in await memory.list_metadata(namespace)]
    keys = await memory.list_metadata_keys(namespace) if has(memory, "list_metadata_keys") else None
    return (entries, keys)


async def maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


# -- the reference reading of the history rules -------------------------------------------


@attrs.define
class ModelRow:
    timestamp: int
    seq: int
    message: Message
    archived: bool = False

    @property
    def conversation(self) -> bool:
        return self.message.kind not in CONTROL_KINDS


@attrs.define
class HistoryModel:
    """A deliberately naive model of one store's history, to compare a backend against."""

    rows: dict[str, list[ModelRow]] = attrs.Factory(dict)
    seq: int = 0

    def save(self, session_id: str, message: Message) -> None:
        assert message.timestamp is not None, "the model only takes stamped messages"
        self.seq += 1
        rows = self.rows.setdefault(session_id, [])
        rows.append(ModelRow(message.timestamp, self.seq, message))
        rows.sort(key=lambda row: (row.timestamp, row.seq))

    def active(self, session_id: str) -> list[ModelRow]:
        return [row for row in self.rows.get(session_id, []) if not row.archived]

    def history(self, session_id: str, limit: float) -> list[Message]:
        return [row.message for row in window(self.active(session_id), limit)]

    def full(self, session_id: str, limit: float) -> list[Message]:
        rows = self.rows.get(session_id, [])
        chosen = rows if limit == INF else (rows[max(0, len(rows) - int(limit)) :] if limit else [])
        return [row.message for row in chosen]

    def count(self, session_id: str) -> int:
        return sum(1 for row in self.active(session_id) if row.conversation)

    def archive(self, session_id: str, count: float, keep: Sequence[int]) -> int:
        active = self.active(session_id)
        span = active if count == INF else active[: int(count)]
        done = 0
        for position, row in enumerate(span):
            if position not in set(keep):
                row.archived = True
                done += 1
        return done

    def delete(self, session_id: str, timestamps: Sequence[int]) -> int:
        rows = self.rows.get(session_id, [])
        kept = [row for row in rows if row.timestamp not in set(timestamps)]
        self.rows[session_id] = kept
        return len(rows) - len(kept)

    def replace(self, session_id: str, old: str, new: str, recent: float) -> int:
        rows = self.rows.get(session_id, [])
        chosen = (
            rows if recent == INF else (rows[max(0, len(rows) - int(recent)) :] if recent else [])
        )
        changed = 0
        for row in chosen:
            content = row.message.content
            if isinstance(content, str) and old in content:
                row.message = attrs.evolve(row.message, content=content.replace(old, new))
                changed += 1
        return changed


def window(
    rows: Sequence[Any], limit: float, is_conversation: Callable[[Any], bool] | None = None
) -> list[Any]:
    """Every row after the (limit+1)-th newest conversation row; all rows when there are
    at most ``limit`` conversation rows; none for limit 0."""
    check = is_conversation or (lambda row: row.conversation)
    if limit == 0:
        return []
    if limit == INF:
        return list(rows)
    seen = 0
    for index in range(len(rows) - 1, -1, -1):
        if check(rows[index]):
            seen += 1
            if seen > limit:
                return list(rows[index + 1 :])
    return list(rows)


def message_window(messages: Sequence[Message], limit: float) -> list[Message]:
    return window(messages, limit, lambda message: message.kind not in CONTROL_KINDS)


__all__ = [
    "INF",
    "MARKER",
    "T0",
    "HistoryModel",
    "conformance",
    "cross_session_max_limit",
    "full_message",
    "has",
    "history_state",
    "marker",
    "maybe_await",
    "message_window",
    "metadata_state",
    "msg",
    "range_query_limit",
    "require",
    "stamped",
    "texts",
    "window",
]
