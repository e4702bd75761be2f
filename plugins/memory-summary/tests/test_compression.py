"""The compression algorithm (SPEC §7.1, §7.3) against every memory backend, in a real host.

The summary model is scripted and, where timing matters, held behind an ``asyncio.Event``:
the test acts on the store while the model "thinks", then lets it answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from typing import Any

import pytest
from aalis_api_llm import LLMResponseError, LLMTimeout
from aalis_api_memory import CompressionError, CompressionUsage
from aalis_plugin_memory_summary._extractive import HEADER
from aalis_schema_message import Message, ToolCall

SID = "s1"
START = ("session_compressing", "start")
DONE = ("session_compressing", "done")
ERROR = ("session_compressing", "error")
CHANGED = ("history_changed", None)
LONG = "This sentence is long enough to weigh something in the token estimate. " * 4
#: A summary long enough for spans of LONG messages (a summary far too short for its span
#: is rejected: test_summary_check.py).
SPAN_SUMMARY = "The user wrote long sentences about the token estimate."


def _id(*parts: object) -> str:
    """The id a test message is saved under: the same for the same message built twice, so
    what a test saved compares equal to what it reads back (stores keep ids)."""
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:20]


def m(role: str, text: str | None, ts: int, **kw: Any) -> Message:
    kw.setdefault("id", _id(role, text, ts))
    return Message(role=role, content=text, timestamp=ts, **kw)


def marker(ts: int) -> Message:
    return Message(
        role="notice", kind="event-marker", content="turn", timestamp=ts, id=_id("marker", ts)
    )


def reply(summary: str, keep: list[Any] | None = None) -> str:
    import json

    return json.dumps({"summary": summary, "keep": keep or []})


async def history(env: Any, sid: str = SID) -> list[Message]:
    return list(await env.memory.get_history(sid, math.inf))


async def full(env: Any, sid: str = SID) -> list[Message]:
    return list(await env.memory.get_full_history(sid, math.inf))


async def held(env: Any, sid: str = SID) -> asyncio.Task[None]:
    """Start a compression whose model is held; returns once the model was called."""
    env.model.hold()
    task = asyncio.create_task(env.service.compress(sid))
    await asyncio.wait_for(env.model.entered.wait(), 10)
    return task


def codes(excinfo: pytest.ExceptionInfo[CompressionError]) -> str:
    return excinfo.value.reason_code


# -- nothing to do --------------------------------------------------------------------------


async def test_empty_or_marker_only_history_does_nothing(env: Any) -> None:
    await env.service.compress("empty")
    await env.save("markers", marker(1000), marker(2000))
    await env.service.compress("markers")
    assert env.model.calls == []
    assert env.recorder.events == []
    assert await env.service.summary("markers") is None
    assert await history(env, "markers") == [marker(1000), marker(2000)]


# -- the main path --------------------------------------------------------------------------


async def test_manual_compression_of_two_messages(env: Any) -> None:
    question = m("user", "What is the capital of France?", 1000)
    answer = m("assistant", "Paris.", 2000)
    await env.save(SID, question, answer)
    env.model.replies.append(reply("The user asked for the capital of France: Paris."))

    await env.service.compress(SID)

    prompt = env.model.prompt()
    assert "Previous summary: (none)" in prompt
    assert "#0 user: What is the capital of France?" in prompt
    assert "#1 assistant: Paris." in prompt
    [divider] = await history(env)
    assert divider.kind == "event-marker"
    assert divider.timestamp == 2000
    record = await env.service.summary(SID)
    assert record is not None
    assert record.text == "The user asked for the capital of France: Paris."
    assert record.model == "scripted-model"
    assert (record.covered_from, record.covered_to) == (1000, 2000)
    assert await full(env) == [question, answer, divider]
    assert env.recorder.of(SID) == [START, CHANGED, DONE]


async def test_summaries_are_cumulative(env: Any) -> None:
    await env.save(SID, m("user", "one", 1000), m("assistant", "two", 2000))
    env.model.replies.append(reply("first summary"))
    await env.service.compress(SID)
    await env.save(SID, m("user", "three", 3000), m("assistant", "four", 4000))
    env.model.replies.append(reply("second summary"))
    await env.service.compress(SID)

    prompt = env.model.prompt()
    assert "Previous summary:\nfirst summary" in prompt
    # the first divider sits at #0 and is never shown to the model
    assert "#1 user: three" in prompt
    assert "#2 assistant: four" in prompt
    assert "#0" not in prompt
    record = await env.service.summary(SID)
    assert record is not None
    assert record.text == "second summary"
    assert (record.covered_from, record.covered_to) == (1000, 4000)
    [divider] = await history(env)
    assert divider.timestamp == 4000


async def test_a_late_older_save_never_moves_the_covered_range_back(env: Any) -> None:
    # Another process saved a turn with older timestamps after the first compression: the
    # next summary covers it, and still everything the first one did.
    await env.save(SID, m("user", "one", 1000), m("assistant", "two", 4000))
    env.model.replies.append(reply("first summary"))
    await env.service.compress(SID)
    await env.save(SID, m("user", "late", 2000), m("assistant", "late reply", 3000))
    env.model.replies.append(reply("second summary"))
    await env.service.compress(SID)

    record = await env.service.summary(SID)
    assert record is not None
    assert record.text == "second summary"
    assert (record.covered_from, record.covered_to) == (1000, 4000)


async def test_keep_picks_with_markers_in_the_span(env: Any) -> None:
    kept = m("user", "Book it.", 3000)
    await env.save(
        SID,
        m("user", LONG, 1000),
        marker(1500),
        m("assistant", LONG, 2000),
        kept,
        m("assistant", LONG, 4000),
    )
    env.model.replies.append(reply(SPAN_SUMMARY, ["#1", "#3"]))  # #1 is a marker: ignored
    await env.service.compress(SID)
    after = await history(env)
    assert after[0] == kept
    assert after[1].kind == "event-marker"
    assert len(after) == 2
    assert len(await full(env)) == 6


async def test_the_token_cap_stops_at_the_first_pick_that_breaks_it(env: Any) -> None:
    short4, short5 = m("user", "yes", 5000), m("assistant", "fine", 6000)
    await env.save(
        SID,
        *[m("user" if i % 2 == 0 else "assistant", LONG, 1000 * (i + 1)) for i in range(4)],
        short4,
        short5,
    )
    # newest first: #5 and #4 are small and fit 10 % of the tokens; #1 is too big -> stop
    env.model.replies.append(reply(SPAN_SUMMARY, ["#1", "#4", "#5"]))
    await env.service.compress(SID)
    after = await history(env)
    assert after[:2] == [short4, short5]
    assert [x.kind for x in after[2:]] == ["event-marker"]


async def test_the_count_cap_limits_kept_messages(make_env: Any) -> None:
    async with make_env(summary={"keep_ratio": 1.0, "history_limit": 4}) as env:
        messages = [
            m("user" if i % 2 == 0 else "assistant", f"message {i}", 1000 * (i + 1))
            for i in range(4)
        ]
        await env.save(SID, *messages)
        env.model.replies.append(reply(SPAN_SUMMARY, ["#0", "#1", "#2", "#3"]))
        await env.service.compress(SID)
        after = await history(env)
        # floor(4 / 2) = 2 places, newest first
        assert after[:2] == messages[2:]
        assert len(after) == 3


@pytest.mark.parametrize(
    "text",
    [
        '{"summary": "S", "keep": "all"}',
        '{"summary": "S", "keep": [null, true, 1.5, "x", -3, 999, {"a": 1}, "#-1", "#0#1"]}',
        '{"summary": "S", "keep": {"#0": true}}',
        'Here you go: {"summary": "S", "keep": ["nine"]} -- done',
        "S",
    ],
)
async def test_garbage_keep_lists_keep_nothing(env: Any, text: str) -> None:
    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    env.model.replies.append(text)
    await env.service.compress(SID)
    [divider] = await history(env)
    assert divider.kind == "event-marker"
    record = await env.service.summary(SID)
    assert record is not None
    assert record.text == "S"


async def test_tool_groups_are_never_split_and_kept_whole(make_env: Any) -> None:
    async with make_env(summary={"keep_ratio": 1.0}) as env:
        call = m(
            "assistant", None, 2000, tool_calls=(ToolCall(id="c1", name="weather", arguments="{}"),)
        )
        result = m("tool", "rain", 3000, tool_call_id="c1")
        pending = m(
            "assistant", None, 5000, tool_calls=(ToolCall(id="c2", name="clock", arguments="{}"),)
        )
        await env.save(
            SID,
            m("user", "weather?", 1000),
            call,
            result,
            m("assistant", "It rains.", 4000),
            m("user", "and the time?", 4500),
            pending,
        )
        env.model.replies.append(reply(SPAN_SUMMARY, ["#2"]))
        await env.service.compress(SID)
        prompt = env.model.prompt()
        assert "#3 assistant: It rains." in prompt
        # the open call stays after the split, and so does the question it answers
        assert "#4" not in prompt
        assert "#5" not in prompt
        after = await history(env)
        assert after[:2] == [call, result]
        assert after[2].kind == "event-marker"
        assert after[2].timestamp == 4000
        assert after[3:] == [m("user", "and the time?", 4500), pending]


# -- concurrency and cancellation -------------------------------------------------------------


async def test_a_second_compress_while_one_runs_is_busy(env: Any) -> None:
    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    task = await held(env)
    with pytest.raises(CompressionError) as excinfo:
        await env.service.compress(SID)
    assert codes(excinfo) == "busy"
    assert env.recorder.of(SID) == [START]
    assert env.service.running(SID)
    assert env.model.gate is not None
    env.model.gate.set()
    await task
    assert env.recorder.of(SID) == [START, CHANGED, DONE]
    assert not env.service.running(SID)


async def test_a_clear_while_running_cancels_and_writes_nothing(env: Any) -> None:
    from aalis_agent import run_clear

    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    task = await held(env)
    await run_clear(env.host, "session", session_id=SID)
    assert env.model.gate is not None
    env.model.gate.set()
    with pytest.raises(CompressionError) as excinfo:
        await task
    assert codes(excinfo) == "cleared"
    assert await full(env) == []
    assert await env.service.summary(SID) is None
    events = env.recorder.of(SID)
    assert events[0] == START
    assert events[-1] == ERROR
    assert DONE not in events


async def test_a_summary_only_clear_while_running_leaves_history_and_no_summary(env: Any) -> None:
    from aalis_agent import run_clear

    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    env.model.replies.append(reply("old summary"))
    await env.service.compress(SID)
    await env.save(SID, m("user", "c", 3000), m("assistant", "d", 4000))
    before = await history(env)
    task = await held(env)
    rows = await run_clear(env.host, "session", session_id=SID, types=["summary"])
    assert [(r.source, r.success, r.type) for r in rows] == [("memory-summary", True, "summary")]
    assert env.model.gate is not None
    env.model.gate.set()
    with pytest.raises(CompressionError) as excinfo:
        await task
    assert codes(excinfo) == "cleared"
    assert await history(env) == before  # nothing archived
    assert await env.service.summary(SID) is None


@pytest.mark.parametrize("announce", [True, False])
async def test_a_timestamp_deletion_while_running_is_history_changed(
    env: Any, announce: bool
) -> None:
    first, second, third = m("user", "a", 1000), m("assistant", "b", 2000), m("user", "c", 3000)
    await env.save(SID, first, second, third)
    task = await held(env)
    assert await env.memory.delete_messages_by_timestamps(SID, [2000]) == 1
    if announce:
        await env.host.emit(
            "memory_messages_deleted", session_id=SID, timestamps=[2000], ids=[second.id]
        )
    assert env.model.gate is not None
    env.model.gate.set()
    with pytest.raises(CompressionError) as excinfo:
        await task
    assert codes(excinfo) == "history_changed"
    assert await history(env) == [first, third]
    assert await env.service.summary(SID) is None
    assert env.recorder.of(SID)[-1] == ERROR


async def test_a_rewrite_while_running_is_history_changed(env: Any) -> None:
    await env.save(SID, m("user", "call me Al", 1000), m("assistant", "ok", 2000))
    task = await held(env)
    assert await env.memory.update_message_content(SID, "Al", "Bo") == 1
    await env.host.emit(
        "memory_messages_rewritten", session_id=SID, messages=[m("user", "call me Bo", 1000)]
    )
    assert env.model.gate is not None
    env.model.gate.set()
    with pytest.raises(CompressionError) as excinfo:
        await task
    assert codes(excinfo) == "history_changed"
    assert len(await history(env)) == 2


async def test_a_message_appended_while_running_survives_after_the_kept_originals(env: Any) -> None:
    kept = m("user", "keep me", 1000)
    await env.save(
        SID, kept, m("assistant", LONG, 2000), m("user", LONG, 3000), m("assistant", LONG, 3500)
    )
    env.model.replies.append(reply(SPAN_SUMMARY, ["#0"]))
    task = await held(env)
    appended = m("user", "said meanwhile", 9000)
    await env.memory.save_message(SID, appended)
    assert env.model.gate is not None
    env.model.gate.set()
    await task
    after = await history(env)
    assert after[0] == kept
    assert after[1].kind == "event-marker"
    assert after[1].timestamp == 3500
    assert after[2] == appended
    assert len(after) == 3


# -- model failures ---------------------------------------------------------------------------


class Broken:
    """A result object without text, as a broken stream hands back."""

    content = None


@pytest.mark.parametrize(
    "failure",
    [
        RuntimeError("model exploded"),
        LLMTimeout("no answer within 5 s"),
        LLMResponseError("stream ended before the reply was complete"),
        "",
        "   ",
        '{"summary": "", "keep": ["#0"]}',
        Broken(),
    ],
    ids=["raises", "llm-timeout", "broken-stream", "empty", "blank", "empty-summary", "no-text"],
)
async def test_a_model_failure_leaves_history_and_previous_summary_untouched(
    env: Any, failure: Any
) -> None:
    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    env.model.replies.append(reply("previous summary"))
    await env.service.compress(SID)
    await env.save(SID, m("user", "c", 3000), m("assistant", "d", 4000))
    before_active, before_full = await history(env), await full(env)
    env.recorder.events.clear()

    env.model.replies.append(failure)
    with pytest.raises(CompressionError) as excinfo:
        await env.service.compress(SID)
    assert codes(excinfo) == "model_failed"
    assert await history(env) == before_active
    assert await full(env) == before_full
    record = await env.service.summary(SID)
    assert record is not None
    assert record.text == "previous summary"
    assert env.recorder.of(SID) == [START, ERROR]

    # the session is free again: the next compression runs and commits
    assert not env.service.running(SID)
    env.model.replies.append(reply("recovered"))
    await env.service.compress(SID)
    record = await env.service.summary(SID)
    assert record is not None
    assert record.text == "recovered"


async def test_a_model_that_never_answers_times_out(make_env: Any) -> None:
    async with make_env(summary={"timeout": 0.2}) as env:
        await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
        env.model.hold()
        with pytest.raises(CompressionError) as excinfo:
            await env.service.compress(SID)
        assert codes(excinfo) == "model_failed"
        assert "within 0.2 s" in excinfo.value.message
        assert len(await history(env)) == 2
        assert not env.service.running(SID)


# -- automatic compression --------------------------------------------------------------------

DUE = CompressionUsage(used=9000, context_window=10000, token_budget=10000, compressible=8000)
NOT_DUE = CompressionUsage(used=100, context_window=10000, token_budget=10000, compressible=50)


async def usage(
    env: Any, value: CompressionUsage = DUE, sid: str = SID, platform: str | None = None
) -> None:
    await env.host.emit("token_usage", session_id=sid, platform=platform, usage=value)


async def settle(env: Any, sid: str = SID) -> None:
    """Wait until no compression of ``sid`` is in flight."""
    await asyncio.sleep(0)
    deadline = asyncio.get_running_loop().time() + 10
    while env.service.running(sid):
        assert asyncio.get_running_loop().time() < deadline, "compression did not finish"
        await asyncio.sleep(0.01)


async def test_auto_compression_starts_exactly_one_run(env: Any) -> None:
    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    await usage(env, NOT_DUE)
    assert not env.service.running(SID)
    gate = env.model.hold()
    await usage(env)
    await usage(env)
    await asyncio.wait_for(env.model.entered.wait(), 10)
    await usage(env)
    assert env.service.running(SID)
    assert len(env.model.calls) == 1
    gate.set()
    await settle(env)
    assert env.recorder.of(SID) == [START, CHANGED, DONE]
    assert len(env.model.calls) == 1
    record = await env.service.summary(SID)
    assert record is not None


async def test_auto_compression_backs_off_after_failures(env: Any) -> None:
    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    env.model.replies.extend([RuntimeError("down"), RuntimeError("still down")])

    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 1
    assert env.recorder.of(SID) == [START, ERROR]

    await usage(env)  # within 60 s: nothing
    env.clock.now += 59
    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 1

    env.clock.now += 2  # 61 s after the failure
    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 2  # failed again: now 120 s

    env.clock.now += 61
    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 2
    env.clock.now += 60
    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 3  # succeeded: back-off reset
    assert env.recorder.of(SID)[-1] == DONE

    await env.save(SID, m("user", "c", 3000), m("assistant", "d", 4000))
    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 4


async def test_a_clear_resets_the_back_off(env: Any) -> None:
    from aalis_agent import run_clear

    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    env.model.replies.append(RuntimeError("down"))
    await usage(env)
    await settle(env)
    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 1
    await run_clear(env.host, "session", session_id=SID, types=["summary"])
    await usage(env)
    await settle(env)
    assert len(env.model.calls) == 2


async def test_auto_compression_follows_the_session_lines(env: Any) -> None:
    await env.save(SID, m("user", "a", 1000), m("assistant", "b", 2000))
    small = CompressionUsage(
        used=10, context_window=10000, token_budget=10000, compressible=10, history_messages=2
    )
    await usage(env, small)
    await settle(env)
    assert env.model.calls == []
    await env.service.set_session_lines(SID, history_limit=2)
    await usage(env, small)
    await settle(env)
    assert len(env.model.calls) == 1


# -- lines, summary records, availability -------------------------------------------------------


async def test_compress_at_layers(make_env: Any) -> None:
    settings = {
        "compress_at": 0.6,
        "history_limit": 40,
        "platforms": {
            "tg": {"compress_at": 0.5, "history_limit": 10},
            "quiet": {"compress_at": 0.0},
        },
    }
    async with make_env(summary=settings) as env:
        service = env.service
        assert await service.compress_at("x") == 0.6
        assert await service.compress_at("x", "tg") == 0.5
        assert await service.compress_at("x", "quiet") is None
        assert await service.compress_at("x", "elsewhere") == 0.6
        assert await service.history_limit("x", "tg") == 10
        assert await service.history_limit("x", "quiet") == 40

        await service.set_session_lines("x", compress_at=0.9, history_limit=0)
        assert await service.compress_at("x", "tg") == 0.9
        assert await service.history_limit("x", "tg") == 0
        assert await service.compress_at("y", "tg") == 0.5

        for bad, error in [
            ({"compress_at": 1.5}, ValueError),
            ({"compress_at": float("nan")}, ValueError),
            ({"compress_at": True}, TypeError),
            ({"history_limit": -1}, ValueError),
            ({"history_limit": 2.0}, TypeError),
        ]:
            with pytest.raises(error):
                await service.set_session_lines("x", **bad)
        with pytest.raises(TypeError):
            await service.set_session_lines(3, compress_at=0.5)
        assert await service.compress_at("x", "tg") == 0.9  # bad input changed nothing

        await service.set_session_lines("x")
        assert await service.compress_at("x", "tg") == 0.5
        assert await service.history_limit("x") == 40


async def test_default_lines(env: Any) -> None:
    assert await env.service.compress_at("any") == 0.7
    assert await env.service.history_limit("any") == 50


async def test_without_llm_auto_uses_the_extractive_summariser(make_env: Any) -> None:
    async with make_env(with_llm=False) as env:
        await env.save(
            SID,
            m("user", "I want to plan a trip to Lisbon in May.", 1000),
            m("assistant", "A week in Lisbon costs about 1200 euros.", 2000),
        )
        await env.service.compress(SID)
        record = await env.service.summary(SID)
        assert record is not None
        assert record.model == "extractive"
        assert record.text.startswith(HEADER)
        assert "Lisbon" in record.text
        [divider] = await history(env)
        assert divider.metadata == {
            "event": "compression",
            "archived": 2,
            "kept": 0,
            "model": "extractive",
        }


async def test_summariser_llm_without_a_model_is_unavailable(make_env: Any) -> None:
    async with make_env(with_llm=False, summary={"summariser": "llm"}) as env:
        await env.save(SID, m("user", "a", 1000))
        with pytest.raises(CompressionError) as excinfo:
            await env.service.compress(SID)
        assert codes(excinfo) == "unavailable"
        assert env.recorder.events == []
        assert len(await history(env)) == 1


async def test_summariser_extractive_ignores_the_model(make_env: Any) -> None:
    async with make_env(summary={"summariser": "extractive"}) as env:
        await env.save(SID, m("user", "Lisbon trip budget.", 1000), m("assistant", "Noted.", 1500))
        await env.service.compress(SID)
        assert env.model.calls == []
        record = await env.service.summary(SID)
        assert record is not None
        assert record.model == "extractive"


# -- clear participation ----------------------------------------------------------------------


async def test_clear_of_summaries(env: Any) -> None:
    from aalis_agent import run_clear

    for sid in ("a", "b"):
        # The same words in two sessions are two messages: ids of their own.
        await env.save(
            sid, m("user", "hello", 1000, id=f"{sid}-q"), m("assistant", "hi", 1500, id=f"{sid}-a")
        )
        await env.service.compress(sid)
    await env.service.set_session_lines("a", compress_at=0.5)

    rows = await run_clear(env.host, "session", session_id="a", types=["summary"])
    assert [(r.source, r.success, r.type, str(r.message)) for r in rows] == [
        ("memory-summary", True, "summary", "Summary cleared")
    ]
    assert await env.service.summary("a") is None
    assert await env.service.summary("b") is not None
    assert len(await history(env, "a")) == 1  # the history was not asked for
    assert await env.service.compress_at("a") == 0.5  # settings are not summaries

    await env.save("a", m("user", "again", 2000), m("assistant", "hi again", 2500))
    await env.service.compress("a")
    rows = await run_clear(env.host, "all")
    summary_rows = [r for r in rows if r.type == "summary"]
    assert [(r.success, str(r.message)) for r in summary_rows] == [
        (True, "Summaries cleared (2 sessions)")
    ]
    assert await env.service.summary("a") is None
    assert await env.service.summary("b") is None
