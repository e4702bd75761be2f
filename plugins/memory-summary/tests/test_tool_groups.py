"""``tool_groups`` in one pass gives exactly what the rule says, checked against the rule
written the direct way (each call scanning the rest of the snapshot), on random snapshots."""

from __future__ import annotations

from collections.abc import Sequence

from aalis_plugin_memory_summary._spans import ToolGroup, tool_groups
from aalis_schema_message import Message, ToolCall
from hypothesis import given, settings, strategies as st


def by_scanning(snapshot: Sequence[Message]) -> list[ToolGroup]:
    groups: list[ToolGroup] = []
    for index, message in enumerate(snapshot):
        if message.is_control or message.role != "assistant" or not message.tool_calls:
            continue
        ids = {call.id for call in message.tool_calls}
        results: list[int] = []
        answered: set[str] = set()
        for later in range(index + 1, len(snapshot)):
            other = snapshot[later]
            call_id = other.tool_call_id
            if other.is_control or other.role != "tool" or call_id is None or call_id not in ids:
                continue
            if call_id in answered:
                continue
            answered.add(call_id)
            results.append(later)
        groups.append(ToolGroup(index, tuple(results), answered == ids))
    return groups


IDS = st.sampled_from(["a", "b", "c", "d"])
MESSAGES = st.one_of(
    st.builds(lambda: Message(role="user", content="q")),
    st.builds(lambda: Message(role="assistant", content="r")),
    st.builds(lambda: Message(role="notice", kind="event-marker", content="turn")),
    st.builds(
        lambda ids: Message(
            role="assistant",
            content=None,
            tool_calls=tuple(ToolCall(id=i, name="f", arguments="{}") for i in ids),
        ),
        st.lists(IDS, min_size=1, max_size=3),
    ),
    st.builds(lambda i: Message(role="tool", content="x", tool_call_id=i), IDS),
    st.builds(
        lambda i: Message(role="tool", kind="event-marker", content="x", tool_call_id=i), IDS
    ),
)


@settings(max_examples=300, derandomize=True)
@given(st.lists(MESSAGES, max_size=30))
def test_one_pass_equals_the_rule(snapshot: list[Message]) -> None:
    assert tool_groups(snapshot) == by_scanning(snapshot)
