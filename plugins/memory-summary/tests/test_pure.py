"""The pure parts of the algorithm: split point, keep rules, reply parsing."""

import pytest
from aalis_agent import estimate_message_tokens
from aalis_plugin_memory_summary._prompt import build_prompt, message_line, parse_reply
from aalis_plugin_memory_summary._spans import parse_label, select_keep, split_point, tool_groups
from aalis_schema_message import Message, ToolCall


def u(text: str, ts: int = 0) -> Message:
    return Message(role="user", content=text, timestamp=ts)


def a(text: str, ts: int = 0) -> Message:
    return Message(role="assistant", content=text, timestamp=ts)


def marker(ts: int = 0) -> Message:
    return Message(role="notice", kind="event-marker", content="turn", timestamp=ts)


def call(*ids: str) -> Message:
    return Message(
        role="assistant",
        content=None,
        tool_calls=tuple(ToolCall(id=i, name="lookup", arguments="{}") for i in ids),
    )


def result(call_id: str, text: str = "ok") -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id)


# -- split point ----------------------------------------------------------------------------


def test_split_takes_everything_when_no_group_is_open() -> None:
    snapshot = [u("q"), call("c1"), result("c1"), a("done")]
    assert split_point(snapshot) == 4


def test_split_moves_before_a_tool_call_still_waiting_for_results() -> None:
    snapshot = [u("q"), a("x"), call("c1", "c2"), result("c1"), marker()]
    assert split_point(snapshot) == 2
    # results arriving out of order, interleaved with a marker, still form one group
    snapshot = [u("q"), call("c1", "c2"), marker(), result("c2"), result("c1"), u("next")]
    [group] = tool_groups(snapshot)
    assert group.positions == (1, 3, 4)
    assert group.complete
    assert split_point(snapshot) == 6


def test_split_cascades_over_nested_open_groups() -> None:
    snapshot = [u("q"), call("c1"), call("c2"), result("c1"), u("more")]
    # c2 is open -> split before #2; c1's group ends at #3 >= 2 -> split before #1
    assert split_point(snapshot) == 1


# -- keep rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (3, 3),
        ("#3", 3),
        (" # 12 ", 12),
        ("7", 7),
        (True, None),
        (-1, None),
        (1.0, None),
        ("x3", None),
        (None, None),
        ({"a": 1}, None),
    ],
)
def test_labels(entry: object, expected: int | None) -> None:
    assert parse_label(entry) == expected


def test_keep_ignores_markers_positions_outside_the_span_and_garbage() -> None:
    long = "word " * 40
    snapshot = [u(long), marker(), a(long), u(long), a(long), u("after the split?")]
    choice = select_keep(
        snapshot, 5, ["#1", 7, "#5", "nonsense", None, 3], keep_ratio=1.0, history_limit=0
    )
    assert choice.positions == (3,)


def test_a_pick_inside_a_tool_group_keeps_the_whole_group() -> None:
    snapshot = [u("q " * 30), call("c1"), result("c1", "r " * 30), a("x " * 30)]
    choice = select_keep(snapshot, 4, ["#2"], keep_ratio=1.0, history_limit=0)
    assert choice.positions == (1, 2)
    assert choice.kept_messages == 2


def test_an_orphaned_tool_result_is_never_kept() -> None:
    snapshot = [result("gone", "r " * 30), u("q " * 30)]
    assert select_keep(snapshot, 2, ["#0"], keep_ratio=1.0, history_limit=0).positions == ()


def test_token_cap_stops_at_the_first_pick_that_breaks_it() -> None:
    small = "s " * 10  # 6 + 4 = 10 tokens
    big = "b " * 70  # 40 + 4 = 44 tokens
    snapshot = [u(small), a(small), u(big), a(small), u("x " * 300)]
    total = sum(estimate_message_tokens(m) for m in snapshot)
    ratio = 30 / total  # cap: 30 tokens
    # newest first: #3 (10) fits, #2 (44) breaks the cap -> stop, #0 is not considered
    choice = select_keep(snapshot, 5, ["#0", "#2", "#3"], keep_ratio=ratio, history_limit=0)
    assert choice.positions == (3,)
    assert choice.kept_tokens == 10


def test_count_cap_counts_post_split_conversation() -> None:
    snapshot = [u("a"), a("b"), u("c"), a("d"), u("e"), call("c9")]
    split = split_point(snapshot)
    assert split == 5
    picks = ["#0", "#1", "#2", "#3", "#4"]
    # history_limit 8 -> 4 messages; the open call after the split takes one place
    assert select_keep(snapshot, split, picks, keep_ratio=1.0, history_limit=8).positions == (
        2,
        3,
        4,
    )
    # history_limit 0 switches the count cap off
    assert select_keep(snapshot, split, picks, keep_ratio=1.0, history_limit=0).positions == (
        0,
        1,
        2,
        3,
        4,
    )
    # history_limit 2 -> 1 place, already taken by the post-split message
    assert select_keep(snapshot, split, picks, keep_ratio=1.0, history_limit=2).positions == ()


# -- prompt and reply -------------------------------------------------------------------------


def test_transcript_labels_positions_and_shows_tool_traffic() -> None:
    assert message_line(4, u("hi")) == "#4 user: hi"
    assert message_line(5, call("c1")) == "#5 assistant: [calls tool lookup({})]"
    assert message_line(
        6, Message(role="tool", content="42", tool_call_id="c1", name="lookup")
    ) == ("#6 tool result of lookup: 42")
    prompt = build_prompt("earlier facts", ["#0 user: hi"])
    assert prompt[0].role == "system"
    assert "Previous summary:\nearlier facts" in (prompt[1].content or "")


@pytest.mark.parametrize(
    ("reply", "summary", "keep", "structured"),
    [
        ('{"summary": "S", "keep": ["#1", 2]}', "S", ("#1", 2), True),
        ('```json\n{"summary": "S", "keep": []}\n```', "S", (), True),
        (
            'Sure! Here it is:\n{"summary": "S {braces}", "keep": ["#0"]}\nHope it helps.',
            "S {braces}",
            ("#0",),
            True,
        ),
        ('{"summary": "S", "keep": "#3"}', "S", (), True),
        ('{"summary": "  ", "keep": []}', "", (), True),
        ('{"keep": ["#1"]}', "", ("#1",), True),
        ('{"summary": 42}', "", (), True),
        ("The user asked about trains.", "The user asked about trains.", (), False),
        ("```\nplain fenced text\n```", "plain fenced text", (), False),
        ("   ", "", (), False),
    ],
)
def test_reply_parsing(
    reply: str, summary: str, keep: tuple[object, ...], structured: bool
) -> None:
    parsed = parse_reply(reply)
    assert (parsed.summary, parsed.keep, parsed.structured) == (summary, keep, structured)
