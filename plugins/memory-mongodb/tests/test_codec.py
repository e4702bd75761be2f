"""The document codec on its own: reversible keys, markers, filter strings."""

from __future__ import annotations

import bson
import pytest
from aalis_plugin_memory_mongodb._codec import (
    ESCAPE_MARK,
    FOLD_DEPTH,
    StoredDataError,
    decode_json,
    document_message,
    encode_json,
    escape_key,
    escape_str,
    message_document,
    unescape_key,
    unescape_str,
)
from aalis_schema_message import Message

KEYS = [
    "plain",
    "a.b",
    "$gt",
    "a$b",
    "%",
    "%25",
    "%2E",
    "%int",
    "%json",
    "\x00",
    "a\x00.b$%",
    "",
    "会话",
]


@pytest.mark.parametrize("key", KEYS)
def test_keys_round_trip_and_are_bson_safe(key):
    escaped = escape_key(key)
    assert unescape_key(escaped) == key
    assert "." not in escaped
    assert "$" not in escaped
    assert "\x00" not in escaped
    assert bson.decode(bson.encode({escaped: 1})) == {escaped: 1}


def test_plain_keys_are_unchanged():
    assert escape_key("tool_call_id") == "tool_call_id"
    assert encode_json({"a": {"b": [1, "x", None, True, 1.5]}}) == {
        "a": {"b": [1, "x", None, True, 1.5]}
    }


def test_distinct_keys_stay_distinct():
    escaped = [escape_key(key) for key in KEYS]
    assert len(set(escaped)) == len(KEYS)


@pytest.mark.parametrize(
    "value",
    [
        2**63,
        -(2**63) - 1,
        2**200,
        {"%int": "5"},
        {"%json": "[1]"},
        {"x": [2**64, {"y": -(2**70)}]},
        [True, False, 0, 1, 0.0, -0.0],
    ],
)
def test_values_round_trip_through_bson(value):
    stored = bson.decode(bson.encode({"v": encode_json(value)}))["v"]
    back = decode_json(stored)
    assert back == value
    assert [type(x) for x in _leaves(back)] == [type(x) for x in _leaves(value)]


def _leaves(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def test_deep_values_are_folded_below_mongodb_depth_limit():
    deep: object = "leaf"
    for _ in range(FOLD_DEPTH * 3):
        deep = {"k.$": [deep]}
    encoded = encode_json(deep)
    depth, node = 0, encoded
    while isinstance(node, (dict, list)) and "%json" not in node:
        node = node["k%2E%24"] if isinstance(node, dict) else node[0]
        depth += 1
    assert depth <= FOLD_DEPTH + 1
    assert decode_json(bson.decode(bson.encode({"v": encoded}))["v"]) == deep


def test_encode_refuses_non_json():
    with pytest.raises(TypeError):
        encode_json({"s": {1, 2}})
    with pytest.raises(TypeError):
        encode_json({1: "x"})
    with pytest.raises(ValueError, match="non-finite"):
        encode_json([float("nan")])
    with pytest.raises(ValueError, match="surrogate"):
        encode_json({"\ud800": 1})


def test_decode_refuses_what_it_never_writes():
    for stored in ({"%int": "abc"}, {"%int": 5}, {"%json": "{"}, bson.ObjectId(), b"bytes"):
        with pytest.raises(StoredDataError):
            decode_json(stored)


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "",
        "$gt",
        "\x00",
        "a\x00b",
        ESCAPE_MARK,
        ESCAPE_MARK + "x",
        "\ud800",
        '"\\',
        "会话😀",
    ],
)
def test_filter_strings_round_trip_without_nul(text):
    stored = escape_str(text)
    assert unescape_str(stored) == text
    assert "\x00" not in stored
    stored.encode("utf-8")  # storable


def test_filter_strings_are_unchanged_unless_needed():
    for text in ("plain", "", "$gt", "a.b", "会话😀"):
        assert escape_str(text) == text
    assert escape_str("\x00") != escape_str("")
    assert escape_str(ESCAPE_MARK) != ESCAPE_MARK


def test_message_document_shape():
    message = Message(
        role="user",
        content="hi",
        kind="note",
        timestamp=5,
        metadata={"platform": "qq", "a.b": 1},
        id="m-1",
    )
    doc = message_document("s", message, 5, archived=False)
    assert doc == {
        "_id": "m-1",  # the message id is the document's key
        "session_id": "s",
        "timestamp": 5,
        "archived": False,
        "role": "user",
        "kind": "note",
        "platform": "qq",
        "body": {"content": "hi", "metadata": {"platform": "qq", "a%2Eb": 1}},
    }
    assert document_message({**doc, "seq": 1}) == message


def test_non_string_platform_is_not_filterable():
    message = Message(role="user", metadata={"platform": 7}, id="m")
    doc = message_document("s", message, 1, archived=False)
    assert doc["platform"] is None
    assert document_message(doc).metadata == {"platform": 7}


def test_message_timestamp_outside_int64_is_refused():
    with pytest.raises(ValueError, match="64 bits"):
        message_document("s", Message(role="user", id="m"), 2**63, archived=False)
