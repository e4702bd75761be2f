"""``turn_split``: the split never leaves a question without its answer on either side."""

from __future__ import annotations

from aalis_plugin_memory_summary._spans import turn_split
from aalis_schema_message import Message, ToolCall


def u(text: str = "q") -> Message:
    return Message(role="user", content=text)


def a(text: str = "a") -> Message:
    return Message(role="assistant", content=text)


def call(cid: str = "c") -> Message:
    return Message(role="assistant", tool_calls=(ToolCall(id=cid, name="f", arguments="{}"),))


def result(cid: str = "c") -> Message:
    return Message(role="tool", content="r", tool_call_id=cid)


def mark() -> Message:
    return Message(role="notice", kind="event-marker", content="turn")


def test_finished_turns_are_all_compressed() -> None:
    assert turn_split([u(), a(), u(), a()]) == 4
    assert turn_split([u(), call(), result(), a()]) == 4


def test_a_question_in_flight_stays_with_its_answer_to_come() -> None:
    assert turn_split([u(), a(), u("waiting")]) == 2
    assert turn_split([u(), a(), u("waiting"), mark()]) == 2


def test_a_turn_still_in_its_tool_loop_stays_whole() -> None:
    assert turn_split([u(), a(), u(), call(), result()]) == 2
    assert turn_split([u(), a(), u(), call()]) == 2


def test_a_failed_turn_keeps_its_question_with_the_retry() -> None:
    # "u1" failed (no answer), "u2" is in flight: both stay, merged by the prompt builder.
    assert turn_split([u(), a(), u("u1"), u("u2")]) == 2
    assert turn_split([u("u1"), u("u2"), a()]) == 3


def test_sessions_without_answers_keep_only_the_newest_question() -> None:
    assert turn_split([u("n1"), u("n2"), u("n3")]) == 2


def test_histories_without_questions_keep_the_tool_split() -> None:
    assert turn_split([a(), a(), call()]) == 2
    assert turn_split([]) == 0
