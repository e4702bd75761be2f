"""A model reply is bounded before it is read, and reading it costs time linear in its size.

Complexity is asserted by counting work, not by timing: every attempt to decode a JSON object
is counted with the characters it may scan (from where it starts to the end of the text). A
reader that retries at every ``{`` scans ``n`` characters ``n`` times; a linear one scans a
bounded number of times.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from aalis_api_memory import CompressionError
from aalis_plugin_memory_summary import MemorySummaryConfig
from aalis_plugin_memory_summary._prompt import MAX_DECODE_ATTEMPTS, parse_reply
from aalis_schema_message import Message

MB = 1_000_000

GARBAGE = {
    "unterminated strings": '{"summary": "' * (MB // 13),
    "open braces": "{" * MB,
    "nested objects": '{"a":' * (MB // 5),
    "unclosed fences": "```json\n{" * (MB // 9),
    "closed fences with broken JSON": '```\n{"s": [1,\n```\n' * (MB // 18),
    "prose with braces": "the user said {maybe} and then { ok " * (MB // 36),
}


@pytest.fixture
def decode_work(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts JSON decode attempts and the characters each one may scan."""
    work = {"attempts": 0, "chars": 0}
    original = json.JSONDecoder.raw_decode

    def counted(self: json.JSONDecoder, s: str, idx: int = 0) -> tuple[Any, int]:
        work["attempts"] += 1
        work["chars"] += len(s) - idx
        return original(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counted)
    return work


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_a_megabyte_of_garbage_is_read_in_linear_work(
    kind: str, decode_work: dict[str, int]
) -> None:
    reply = GARBAGE[kind]
    parsed = parse_reply(reply)
    assert decode_work["attempts"] <= MAX_DECODE_ATTEMPTS
    # fenced blocks are read once inside the whole text: at most two passes over every char
    assert decode_work["chars"] <= 2 * MAX_DECODE_ATTEMPTS * len(reply)
    assert parsed.structured is False  # none of it is a JSON object: the text is the summary


def test_a_valid_object_after_garbage_is_still_found(decode_work: dict[str, int]) -> None:
    reply = "{ not json } " * 3 + 'Here: {"summary": "S", "keep": ["#2"]}'
    parsed = parse_reply(reply)
    assert (parsed.summary, parsed.keep, parsed.structured) == ("S", ("#2",), True)


def test_deep_nesting_is_not_an_error() -> None:
    reply = '{"a":' * 100_000 + "1" + "}" * 100_000
    parsed = parse_reply(reply)  # the decoder's recursion limit is a broken object, not a crash
    assert parsed.structured is False


def test_the_reply_cap_has_a_sane_default_and_is_validated() -> None:
    default = MemorySummaryConfig().max_reply_chars
    assert 4_000 <= default <= 100_000  # room for a 1,024-token reply, far below megabytes
    with pytest.raises(ValueError, match="max_reply_chars"):
        MemorySummaryConfig(max_reply_chars=0)
    with pytest.raises((TypeError, ValueError), match="max_reply_chars"):
        MemorySummaryConfig(max_reply_chars=1.5)  # type: ignore[arg-type]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend_name", ["memory-inmemory", "memory-sqlite"], indirect=True)
async def test_a_20_mb_reply_never_becomes_the_summary(make_env: Any) -> None:
    async with make_env() as env:
        for i in range(4):
            role = "user" if i % 2 == 0 else "assistant"
            await env.save("s1", Message(role=role, content=f"m{i}", timestamp=i + 1))
        env.model.replies.append("The summary is " + "x" * (20 * MB))
        with pytest.raises(CompressionError) as excinfo:
            await env.service.compress("s1")
        assert excinfo.value.reason_code == "model_failed"
        assert "max_reply_chars" in excinfo.value.message
        assert await env.service.summary("s1") is None
        assert len(await env.memory.get_history("s1", math.inf)) == 4  # nothing archived


@pytest.mark.parametrize("backend_name", ["memory-inmemory"], indirect=True)
async def test_the_cap_is_configurable(make_env: Any) -> None:
    async with make_env(summary={"max_reply_chars": 2_000}) as env:
        # a question and its answer: a question still waiting for one is never compressed
        await env.save("s1", Message(role="user", content="hello", timestamp=1))
        await env.save("s1", Message(role="assistant", content="hi", timestamp=2))
        env.model.replies.append(json.dumps({"summary": "y" * 1_900, "keep": []}))
        await env.service.compress("s1")
        record = await env.service.summary("s1")
        assert record is not None
        assert record.text == "y" * 1_900
        await env.save("s1", Message(role="user", content="again", timestamp=3))
        await env.save("s1", Message(role="assistant", content="hi again", timestamp=4))
        env.model.replies.append(json.dumps({"summary": "z" * 2_100, "keep": []}))
        with pytest.raises(CompressionError, match="max_reply_chars"):
            await env.service.compress("s1")
