"""The conversation part of a prompt never starts with an assistant message after the system
content and never holds two user messages in a row (strict chat templates refuse both)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from aalis_api_llm import ChatResult, llm
from aalis_api_memory import memory
from aalis_plugin_chat import Chat
from aalis_plugin_chat._turns import EARLIER_NOTE, conversation_turns
from aalis_schema_message import Message, ToolCall

from aalis_core import Host
from aalis_core._plugin import Plugin

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


def m(role: str, text: str | None, **kw: Any) -> Message:
    return Message(role=role, content=text, **kw)


def test_leading_replies_become_a_system_note_and_tool_messages_go() -> None:
    call = m("assistant", None, tool_calls=(ToolCall(id="c", name="f", arguments="{}"),))
    history = [
        m("assistant", "Your budget is 900 euros."),
        call,
        m("tool", "42", tool_call_id="c"),
        m("user", "And the hotel?"),
        m("assistant", "Booked."),
    ]
    turns, note = conversation_turns(history)
    assert [t.role for t in turns] == ["user", "assistant"]
    assert note is not None
    assert note.role == "system"
    assert note.content == f"{EARLIER_NOTE}\nassistant: Your budget is 900 euros."


def test_consecutive_user_messages_are_merged_in_order() -> None:
    history = [
        m("user", "first try"),
        m("user", "second try"),
        m("assistant", "answer"),
        m("user", "a"),
        m("user", "b"),
        m("user", "c"),
    ]
    turns, note = conversation_turns(history)
    assert note is None
    assert [(t.role, t.content) for t in turns] == [
        ("user", "first try\n\nsecond try"),
        ("assistant", "answer"),
        ("user", "a\n\nb\n\nc"),
    ]


def test_a_well_formed_conversation_is_unchanged() -> None:
    history = [m("user", "q"), m("assistant", "a"), m("user", "q2")]
    assert conversation_turns(history) == (history, None)
    assert conversation_turns([]) == ([], None)


class FailingOnce:
    id = "flaky"
    context_window = 4000

    def __init__(self) -> None:
        self.prompts: list[list[Message]] = []
        self.fail_next = False

    async def chat(self, messages: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("the server hung up")
        return ChatResult(content=f"re: {messages[-1].content}", usage=None)


class FlakyLlm(Plugin):
    name = "flaky-llm"
    provides = (llm,)

    def __init__(self) -> None:
        self.model = FailingOnce()

    async def start(self, ctx: Any) -> None:
        ctx.provide(llm, self.model)


async def test_after_a_failed_turn_the_next_prompt_merges_the_two_questions() -> None:
    flaky = FlakyLlm()
    async with Host({}, [inmemory.MemoryInmemory(), Chat(), flaky], discover=False) as host:
        session = host.plugin("chat").session("s")  # type: ignore[union-attr]
        assert not (await session.handle("hello")).err
        flaky.model.fail_next = True
        assert (await session.handle("what is the time?")).err
        reply = await session.handle("are you there?")
        assert not reply.err
        stored = await host.capability(memory).use.get_history("s", math.inf)
        assert [x.role for x in stored] == ["user", "assistant", "user", "user", "assistant"]
    prompt = flaky.model.prompts[-1]
    roles = [x.role for x in prompt]
    assert roles == ["system", "user", "assistant", "user"]
    assert prompt[-1].content == "what is the time?\n\nare you there?"
