# ruff: noqa: RUF001 - Chinese text uses full-width punctuation
"""A model's summary is checked before it replaces its span (docs/compression.md).

The scripted model answers "OK.", a refusal, an error page or nothing at all over a span of 40
messages; none of those may become the summary the next prompts carry. The real stores run:
SQLite (and the in-memory reference).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from aalis_api_memory import CompressionError
from aalis_plugin_memory_summary._check import check_summary, refusal_of, summary_floor
from aalis_plugin_memory_summary._extractive import HEADER
from aalis_schema_message import Message

SID = "checked"
MODEL = "scripted-model"
STORES = pytest.mark.parametrize("backend_name", ["memory-sqlite", "memory-inmemory"])


def reply(summary: str) -> str:
    return json.dumps({"summary": summary, "keep": []})


async def forty(env: Any) -> list[Message]:
    """40 messages of a conversation with facts in it; returns them as stored."""
    for i in range(20):
        await env.memory.save_message(
            SID,
            Message(
                role="user",
                content=f"Note {i}: my flight LH{400 + i} to Berlin leaves on day {i} at 9.",
                timestamp=1000 + 2 * i,
            ),
        )
        await env.memory.save_message(
            SID,
            Message(role="assistant", content=f"Noted flight LH{400 + i}.", timestamp=1001 + 2 * i),
        )
    return list(await env.memory.get_history(SID, math.inf))


async def active(env: Any) -> list[Message]:
    return [m for m in await env.memory.get_history(SID, math.inf) if not m.is_control]


REJECTED = [
    ("OK.", "too short"),
    ("I'm sorry, but I can't help with summarising this conversation right now.", "refusal"),
    ("As an AI language model, I do not keep records of conversations.", "refusal"),
    ("Error: upstream request timed out after 30 s (request id 7f3a)", "refusal"),
    ("<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", "refusal"),
    ("抱歉，我无法总结这段对话，请稍后再试。", "refusal"),
]


@STORES
@pytest.mark.parametrize(
    ("answer", "why"), REJECTED, ids=[w + str(i) for i, (_, w) in enumerate(REJECTED)]
)
async def test_a_summary_that_cannot_carry_its_span_is_replaced_by_the_extractive_one(
    make_env: Any, answer: str, why: str
) -> None:
    async with make_env() as env:
        await forty(env)
        env.model.replies.append(reply(answer))
        await env.service.compress(SID)
        record = await env.service.summary(SID)
        assert record is not None
        assert record.text != answer
        assert answer not in record.text
        assert record.text.startswith(HEADER)
        assert "LH4" in record.text  # the facts are carried, by the offline summary
        label = f"extractive (fallback: {MODEL} summary rejected: "
        assert record.model.startswith(label), record.model
        assert why in record.model
        # the span is compressed, under the labelled summary
        assert len(await active(env)) < 40
        markers = [m for m in await env.memory.get_history(SID, math.inf) if m.is_control]
        assert markers
        assert markers[-1].metadata["model"] == record.model


@STORES
async def test_a_chunk_answered_ok_cannot_hide_behind_a_good_last_chunk(make_env: Any) -> None:
    async with make_env() as env:
        env.model.context_window = 3000  # a few hundred tokens of transcript per call
        for i in range(40):
            await env.memory.save_message(
                SID,
                Message(
                    role="user",
                    content=f"Note {i}: flight LH{400 + i} to Berlin, seat {i}A. " + "words " * 8,
                    timestamp=1000 + i,
                ),
            )
        good = "The user listed flights LH400 onwards to Berlin with their seats."
        env.model.replies.extend([reply("OK."), *(reply(good) for _ in range(30))])
        await env.service.compress(SID)
        assert len(env.model.calls) == 1  # the first chunk's answer stopped the model
        record = await env.service.summary(SID)
        assert record is not None
        assert record.text.startswith(HEADER)
        assert "LH400" in record.text  # the first chunk's messages are carried
        assert record.model.startswith(f"extractive (fallback: {MODEL} summary rejected: too")


@STORES
async def test_an_empty_summary_still_fails_and_archives_nothing(make_env: Any) -> None:
    async with make_env() as env:
        before = await forty(env)
        env.model.replies.append(reply(""))
        with pytest.raises(CompressionError) as excinfo:
            await env.service.compress(SID)
        assert excinfo.value.reason_code == "model_failed"
        assert await env.memory.get_history(SID, math.inf) == before
        assert await env.service.summary(SID) is None


@STORES
async def test_a_good_summary_is_committed_unchanged(make_env: Any) -> None:
    async with make_env() as env:
        await forty(env)
        text = "The user booked flights LH400 to LH419 to Berlin, one a day at 9."
        env.model.replies.append(reply(text))
        await env.service.compress(SID)
        record = await env.service.summary(SID)
        assert record is not None
        assert record.text == text
        assert record.model == MODEL
        assert len(await active(env)) < 40


@STORES
async def test_with_the_fallback_off_a_rejected_summary_fails_and_archives_nothing(
    make_env: Any,
) -> None:
    async with make_env(summary={"on_rejected_summary": "fail"}) as env:
        before = await forty(env)
        env.model.replies.append(reply("OK."))
        with pytest.raises(CompressionError) as excinfo:
            await env.service.compress(SID)
        assert excinfo.value.reason_code == "model_failed"
        assert "rejected: too short" in excinfo.value.message
        assert await env.memory.get_history(SID, math.inf) == before
        assert await env.service.summary(SID) is None


def test_the_floor_grows_with_the_span_and_is_capped() -> None:
    assert summary_floor(10) == 0  # a greeting or two: any honest summary will do
    assert summary_floor(100) == 3
    assert summary_floor(1000) == 10
    assert summary_floor(10**6) == 40
    assert check_summary("Greetings.", 20).ok


@pytest.mark.parametrize(
    "text",
    [
        "The user apologised (sorry!) for the delay; the flight is LH400 on Monday.",
        "User said: I'm sorry my dog is sick. Vet appointment Friday 10:00.",
        "用户说抱歉来晚了，航班是周一的LH400。",
        "Errors in the invoice were fixed; the total is 120 EUR.",
    ],
)
def test_real_summaries_that_mention_apologies_or_errors_pass(text: str) -> None:
    assert refusal_of(text) is None
    assert check_summary(text, 800).ok


@pytest.mark.parametrize(
    "text",
    [
        "Sorry, I cannot summarise this.",
        "I apologize, but I am unable to help with that request.",
        '{"error": {"message": "Rate limit reached", "type": "requests"}}',
        "HTTP/1.1 503 Service Unavailable",
        "作为一个人工智能语言模型，我不能访问这段对话。",
        "错误：请求超时",
        "**Summary:** I'm sorry, I can't do that.",
    ],
)
def test_refusals_and_error_texts_are_recognised(text: str) -> None:
    assert refusal_of(text) is not None
    assert not check_summary(text, 800).ok
