"""The shared input checks every backend calls (the kit asserts their exception types)."""

from __future__ import annotations

import math

import pytest
from aalis_api_memory import (
    RecentMessagesQuery,
    check_count,
    check_limit,
    check_message,
    check_session_id,
    check_text,
    encode_metadata,
)
from aalis_schema_message import Message, ToolCall


def test_check_text_passes_text_and_refuses_lone_surrogates() -> None:
    assert check_text("plain", "x") == "plain"
    assert check_text("中文 🙂 \x00", "x") == "中文 🙂 \x00"
    with pytest.raises(ValueError, match="x is not valid text: lone surrogate at index 1"):
        check_text("a\udc80", "x")


@pytest.mark.parametrize(
    "message",
    [
        Message(role="user\ud800"),
        Message(role="user", content="\udfff"),
        Message(role="user", tool_calls=(ToolCall(id="1", name="f", arguments="\ud800"),)),
        Message(role="user", metadata={"k": ["ok", {"deep": "\ud800"}]}),
        Message(role="user", metadata={"\ud800": 1}),
        Message(role="user", segments=("\ud800",)),
    ],
    ids=["role", "content", "tool-arguments", "metadata-value", "metadata-key", "segments"],
)
def test_check_message_finds_surrogates_anywhere(message: Message) -> None:
    with pytest.raises(ValueError, match="surrogate"):
        check_message(message)


def test_ids_and_metadata_refuse_surrogates() -> None:
    with pytest.raises(ValueError, match="session id"):
        check_session_id("s\ud800")
    with pytest.raises(ValueError, match="metadata data"):
        encode_metadata({"k": "\ud800"})


def test_check_count_needs_a_value() -> None:
    assert check_count(0) == 0
    assert check_count(math.inf) == math.inf
    with pytest.raises(TypeError):
        check_count(None)
    with pytest.raises(ValueError, match="count"):
        check_count(2.0)
    assert check_limit(None, 50) == 50


@pytest.mark.parametrize("field", ["roles", "kinds", "exclude_kinds", "exclude_session_ids"])
def test_query_filters_refuse_a_bare_string(field: str) -> None:
    with pytest.raises(TypeError):
        RecentMessagesQuery(**{field: "user"})
    assert getattr(RecentMessagesQuery(**{field: ["user"]}), field) == ("user",)
