"""The chat session in process: what it saves, what it reports, how it answers."""

from __future__ import annotations

import math
from typing import Any

import pytest
from aalis_api_llm import ChatResult, TokenUsage, llm
from aalis_api_memory import CompressionUsage, memory
from aalis_plugin_chat import Chat
from aalis_plugin_chat._standin import NOTICE

from aalis_core import Host
from aalis_core._markers import hookimpl
from aalis_core._plugin import Plugin

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


class UsageRecorder(Plugin):
    name = "usage-recorder"

    def __init__(self) -> None:
        self.usages: list[tuple[str, str | None, CompressionUsage]] = []

    @hookimpl
    def token_usage(self, session_id: str, platform: str | None, usage: CompressionUsage) -> None:
        self.usages.append((session_id, platform, usage))


class EchoModel:
    id = "echo"
    context_window = 2000

    def __init__(self) -> None:
        self.prompts: list[list[Any]] = []

    async def chat(
        self, messages: Any, *, temperature: Any = None, max_tokens: Any = None
    ) -> ChatResult:
        self.prompts.append(list(messages))
        return ChatResult(
            content=f"echo: {messages[-1].content}",
            usage=TokenUsage(prompt_tokens=120, completion_tokens=8, total_tokens=128),
        )


class EchoLlm(Plugin):
    name = "echo-llm"
    provides = (llm,)

    def __init__(self) -> None:
        self.model = EchoModel()

    async def start(self, ctx: Any) -> None:
        ctx.provide(llm, self.model)


def make_host(*extra: Plugin, config: dict[str, Any] | None = None) -> Host:
    return Host(config or {}, [inmemory.MemoryInmemory(), Chat(), *extra], discover=False)


async def test_every_stand_in_reply_says_so_and_usage_is_reported() -> None:
    recorder = UsageRecorder()
    async with make_host(recorder) as host:
        chat = host.plugin("chat")
        assert isinstance(chat, Chat)
        session = chat.session("s")
        assert session.model_name == "stand-in"
        for text in ["hello", "What is 2 + 2?", "你好", "/help", "tell me a story"]:
            reply = await session.handle(text)
            assert not reply.err
            if text.startswith("/"):
                assert reply.out[0] == "Commands:"
                continue
            [line] = reply.out
            assert line.startswith(f"assistant> {NOTICE} ")
        stored = await host.capability(memory).use.get_history("s", math.inf)
        assert [m.role for m in stored] == ["user", "assistant"] * 4
        assert all(m.metadata and m.metadata["platform"] == "cli" for m in stored)
        assert stored[1].metadata == {"platform": "cli", "model": "stand-in", "no_recall": True}

    assert [(sid, platform) for sid, platform, _ in recorder.usages] == [("s", "cli")] * 4
    last = recorder.usages[-1][2]
    assert last.context_window == 8192
    assert last.token_budget == 8192 - 1024
    assert last.history_messages == 8
    assert not last.trimmed
    assert 0 < last.compressible < last.used


async def test_with_a_model_the_prompt_is_trimmed_to_the_window_and_reported() -> None:
    recorder = UsageRecorder()
    echo = EchoLlm()
    config = {"plugins": {"chat": {"max_reply_tokens": 1000, "system_prompt": "Be terse."}}}
    async with make_host(echo, recorder, config=config) as host:
        session = host.plugin("chat").session("s")  # type: ignore[union-attr]
        assert session.model_name == "echo"
        for i in range(30):
            text = f"message {i}" + " with some padding text" * 5
            reply = await session.handle(text)
            assert reply.out == [f"assistant> echo: {text}"]
    prompt = echo.model.prompts[-1]
    assert prompt[0].content == "Be terse."
    assert prompt[-1].content.startswith("message 29 ")
    assert len(prompt) < 60  # the window (2000 - 1000 tokens) cannot hold 59 messages
    usage = recorder.usages[-1][2]
    assert usage.trimmed
    assert usage.used == 128  # the model's own figures win over the estimate
    assert usage.history_messages == 60
    assert usage.token_budget == 1000


async def test_clear_arguments_are_checked() -> None:
    async with make_host() as host:
        session = host.plugin("chat").session("s")  # type: ignore[union-attr]
        assert (await session.handle("/clear -t")).err == [
            "error: -t needs a clear type, e.g. /clear -t summary"
        ]
        assert (
            (await session.handle("/clear now"))
            .err[0]
            .startswith("error: unexpected argument 'now'")
        )
        reply = await session.handle("/clear -t history")  # an alias of context
        assert reply.out == ["ok memory [context]: conversation history cleared"]
        # A newcomer with the chat alone learns which distribution gives compression.
        (error,) = (await session.handle("/compress")).err
        assert error.startswith("error: no compression provider is active")
        assert "pip install aalis-plugin-memory-summary" in error
        assert (await session.handle("/quit")).quit


async def test_without_memory_a_turn_is_a_clear_error() -> None:
    async with Host({}, [Chat()], discover=False) as host:
        reply = await host.plugin("chat").session("s").handle("hello")  # type: ignore[union-attr]
        assert reply.out == []
        assert reply.err[0].startswith(
            "error: capability 'memory' is not present for consumer 'chat'"
        )


def test_the_stand_in_is_a_chat_model() -> None:
    from aalis_api_llm import ChatModel
    from aalis_plugin_chat import StandInModel

    assert isinstance(StandInModel(), ChatModel)
