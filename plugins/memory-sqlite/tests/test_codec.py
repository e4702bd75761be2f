"""Rows to messages and back: the fast reader builds exactly what the schema's own readers do."""

from __future__ import annotations

from typing import Any

from aalis_plugin_memory_sqlite._codec import (
    build_message,
    decode_messages,
    decode_messages_indexed,
    encode_message,
    message_columns,
)
from aalis_schema_message import Message, ToolCall
from hypothesis import given, settings, strategies as st

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
optional_text = st.none() | st.text(max_size=30)
messages = st.builds(
    Message,
    role=st.text(min_size=1, max_size=10),
    content=optional_text,
    tool_calls=st.none()
    | st.lists(
        st.builds(
            ToolCall,
            id=st.text(max_size=5),
            name=st.text(max_size=5),
            arguments=st.text(max_size=20),
        ),
        max_size=3,
    ).map(tuple),
    tool_call_id=optional_text,
    name=optional_text,
    kind=st.none() | st.sampled_from(["event-marker", "reply", "turn"]),
    timestamp=st.integers(-(2**63), 2**63 - 1),
    reasoning_content=optional_text,
    segments=st.none() | st.lists(json_values, max_size=3).map(tuple),
    images=st.none() | st.lists(json_values, max_size=3).map(tuple),
    audios=st.none() | st.lists(json_values, max_size=3).map(tuple),
    metadata=st.none() | st.dictionaries(st.text(max_size=8), json_values, max_size=4),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(messages, min_size=1, max_size=5))
def test_fast_reader_equals_the_schema_readers(batch: list[Message]) -> None:
    texts = [encode_message(m, m.timestamp or 0) for m in batch]
    decoded = decode_messages(texts, on_corrupt=_fail)
    assert decoded == batch
    import json

    for text, message in zip(texts, decoded, strict=True):
        assert Message.from_stored(json.loads(text)) == message
        assert Message.from_json(json.loads(text)) == message
        assert type(message) is Message


def _fail(index: int, error: str) -> None:
    raise AssertionError(f"row {index} reported corrupt: {error}")


def test_returned_messages_share_nothing_with_each_other() -> None:
    message = Message(role="user", content="x", metadata={"a": {"b": [1]}}, timestamp=1)
    text = encode_message(message, 1)
    first, second = decode_messages([text, text], on_corrupt=_fail)
    first.metadata["a"]["b"].append(2)  # type: ignore[index]
    assert second.metadata == {"a": {"b": [1]}}


def test_columns_follow_the_message() -> None:
    message = Message(role="notice", kind="event-marker", metadata={"platform": "qq"}, id="m1")
    ts, control, kind, role, platform, ident, data = message_columns(message, 42)
    assert (ts, control, kind, role, platform, ident) == (
        42,
        1,
        "event-marker",
        "notice",
        "qq",
        "m1",
    )
    assert build_message(__import__("json").loads(data)) == message.with_timestamp(42)


def test_corrupt_rows_are_reported_and_skipped_without_shifting_others() -> None:
    good = [encode_message(Message(role="user", content=f"c{i}"), i) for i in range(3)]
    reported: list[tuple[int, str]] = []
    rows: list[Any] = [
        good[0],
        "{broken",
        "[1, 2]",
        # One row that is two objects: joining rows must never let it pass as two messages.
        good[1] + "," + good[2],
        good[2],
    ]
    pairs = decode_messages_indexed(rows, on_corrupt=lambda i, e: reported.append((i, e)))
    assert [(i, m.content) for i, m in pairs] == [(0, "c0"), (4, "c2")]
    assert [i for i, _ in reported] == [1, 2, 3]
