"""An auto compression that runs while a turn's model call is in flight keeps the turn whole.

The chat plugin runs the conversation; its model, on one call, reports a usage that makes
memory-summary start an automatic compression and waits for it to finish before answering.
The question of that turn must stay active (its answer has not arrived), so the next prompt
goes ``system, system (summary), user, assistant, user`` and the question sits with its answer.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from aalis_api_llm import ChatResult, llm
from aalis_api_memory import CompressionUsage, compression, memory
from aalis_plugin_memory_summary import MemorySummary
from aalis_schema_message import Message

from aalis_core import Host
from aalis_core._plugin import Plugin

chat_plugin = pytest.importorskip("aalis_plugin_chat")
inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


class MidTurnModel:
    id = "mid-turn"
    context_window = 8000

    def __init__(self) -> None:
        self.host: Host | None = None
        self.compress_on_call: int | None = None
        self.prompts: list[list[Message]] = []

    async def chat(self, messages: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        if len(self.prompts) == self.compress_on_call and self.host is not None:
            # Over the token line (0.7 x 8000), with the 7 messages the history really
            # holds now (a count describing a longer history would mean another process
            # compressed meanwhile, and the compression would rightly do nothing).
            usage = CompressionUsage(
                used=7000, context_window=8000, token_budget=7000, compressible=6000,
                history_messages=7,
            )  # fmt: skip
            await self.host.emit("token_usage", session_id="s", platform="cli", usage=usage)
            service = self.host.capability(compression).use
            assert service.running("s")  # the auto compression started during this call
            for _ in range(500):
                if not service.running("s"):
                    break
                await asyncio.sleep(0.01)
        return ChatResult(content=f"answer to {messages[-1].content}")


class MidTurnLlm(Plugin):
    name = "mid-turn-llm"
    provides = (llm,)

    def __init__(self) -> None:
        self.model = MidTurnModel()

    async def start(self, ctx: Any) -> None:
        ctx.provide(llm, self.model)


async def test_the_prompt_after_an_auto_compression_mid_turn_starts_with_the_question() -> None:
    provider = MidTurnLlm()
    config = {
        "plugins": {
            # offline summariser: the chat's model only answers; lines that the chat's own
            # usage reports never reach, so only the mid-turn report compresses
            "memory-summary": {"summariser": "extractive", "history_limit": 500},
        }
    }
    plugins = [inmemory.MemoryInmemory(), provider, MemorySummary(), chat_plugin.Chat()]
    async with Host(config, plugins, discover=False) as host:
        provider.model.host = host
        provider.model.compress_on_call = 4
        session = host.plugin("chat").session("s")  # type: ignore[union-attr]
        for i in range(5):
            reply = await session.handle(f"question {i}")
            assert not reply.err, reply.err
        active = await host.capability(memory).use.get_history("s", math.inf)
        summary = await host.capability(compression).use.summary("s")
    assert summary is not None
    # The compression ran while "question 3" waited for its answer: it stayed active.
    assert [(m.role, m.content) for m in active if not m.is_control][:2] == [
        ("user", "question 3"),
        ("assistant", "answer to question 3"),
    ]
    assert [m.kind for m in active].count("event-marker") == 1
    prompt = provider.model.prompts[-1]
    roles = [m.role for m in prompt]
    assert roles == ["system", "system", "user", "assistant", "user"]
    assert prompt[1].content is not None
    assert prompt[1].content.startswith("Summary of the earlier conversation:")
    assert [m.content for m in prompt[2:]] == [
        "question 3",
        "answer to question 3",
        "question 4",
    ]
