import json

import pytest
from aalis_schema_message import CONTROL_KINDS, Message, ToolCall
from hypothesis import given, strategies as st

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=10,
)
opt_text = st.none() | st.text()


def full_message() -> Message:
    return Message(
        role="assistant",
        content=None,
        tool_calls=(ToolCall(id="c1", name="search", arguments='{"q": "x"}'),),
        tool_call_id="t",
        name="bot",
        kind="reply",
        timestamp=1700000000000,
        reasoning_content="because",
        segments=({"type": "text", "text": "hi"},),
        images=("https://example.invalid/a.png",),
        audios=({"url": "a.ogg", "seconds": 1.5},),
        metadata={"platform": "qq", "nested": {"list": [1, 2, {"x": None}]}},
    )


def test_every_field_round_trips_through_json_text() -> None:
    message = full_message()
    data = json.loads(json.dumps(message.to_json()))
    assert Message.from_json(data) == message
    assert Message.from_stored(json.loads(json.dumps(message.to_json()))) == message


def test_to_json_omits_absent_fields_and_uses_snake_case() -> None:
    assert Message(role="user", content="hi").to_json() == {"role": "user", "content": "hi"}
    assert "tool_call_id" in full_message().to_json()
    assert "reasoning_content" in full_message().to_json()


def test_mutating_the_input_dict_does_not_change_the_message() -> None:
    meta = {"a": [1]}
    message = Message(role="user", content="x", metadata=meta)
    meta["a"].append(2)
    meta["b"] = 1
    assert message.metadata == {"a": [1]}


def test_copy_is_deep() -> None:
    message = full_message()
    clone = message.copy()
    assert clone == message
    assert clone.metadata is not None
    clone.metadata["nested"]["list"].append(3)
    assert message.metadata is not None
    assert message.metadata["nested"]["list"] == [1, 2, {"x": None}]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"role": 1}, TypeError),
        ({"role": "user", "content": 3}, TypeError),
        ({"role": "user", "timestamp": True}, TypeError),
        ({"role": "user", "timestamp": 1.5}, TypeError),
        ({"role": "user", "metadata": {"x": {1, 2}}}, TypeError),
        ({"role": "user", "metadata": {"x": float("nan")}}, ValueError),
        ({"role": "user", "metadata": {1: "x"}}, TypeError),
        ({"role": "user", "segments": "abc"}, TypeError),
    ],
)
def test_bad_fields_are_refused(kwargs: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        Message(**kwargs)  # type: ignore[arg-type]


def test_from_json_refuses_unknown_keys_and_missing_role() -> None:
    with pytest.raises(ValueError, match="unknown message field"):
        Message.from_json({"role": "user", "contnet": "typo"})
    with pytest.raises(ValueError, match="role"):
        Message.from_json({"content": "x"})


def test_control_kinds() -> None:
    assert "event-marker" in CONTROL_KINDS
    assert Message(role="notice", kind="event-marker").is_control
    assert not Message(role="user", content="x").is_control


@given(
    role=st.text(),
    content=opt_text,
    kind=opt_text,
    timestamp=st.none() | st.integers(min_value=-(2**62), max_value=2**62),
    metadata=st.none() | st.dictionaries(st.text(), json_values, max_size=4),
    segments=st.none() | st.lists(json_values, max_size=3),
)
def test_json_round_trip_property(
    role: str,
    content: str | None,
    kind: str | None,
    timestamp: int | None,
    metadata: dict[str, object] | None,
    segments: list[object] | None,
) -> None:
    message = Message(
        role=role,
        content=content,
        kind=kind,
        timestamp=timestamp,
        metadata=metadata,
        segments=segments,
    )
    assert Message.from_json(json.loads(json.dumps(message.to_json()))) == message


def test_the_stored_reader_knows_every_field() -> None:
    """from_stored fills slots by a fixed field list: a new Message field must join it."""
    import attrs
    from aalis_schema_message import _message as module

    assert set(module._FIELDS_IN_ORDER) == {field.name for field in attrs.fields(Message)}
