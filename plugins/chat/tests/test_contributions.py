"""What the chat adds for other plugins: prompt contributions, the saved-messages event,
``/undo`` and ``/recall`` without a query."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import pytest
from aalis_agent import PromptBlock, PromptRequest
from aalis_api_llm import ChatResult, llm
from aalis_api_memory import memory
from aalis_plugin_chat import Chat
from aalis_schema_message import Message

from aalis_core import Host
from aalis_core._markers import hookimpl
from aalis_core._plugin import Plugin

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


class EchoModel:
    id = "echo"
    context_window = 2000

    def __init__(self) -> None:
        self.prompts: list[list[Message]] = []

    async def chat(self, messages: Any, *, temperature: Any = None, max_tokens: Any = None) -> Any:
        self.prompts.append(list(messages))
        return ChatResult(content=f"echo: {messages[-1].content}")


class EchoLlm(Plugin):
    name = "echo-llm"
    provides = (llm,)

    def __init__(self) -> None:
        self.model = EchoModel()

    async def start(self, ctx: Any) -> None:
        ctx.provide(llm, self.model)


class Notes(Plugin):
    """Contributes one block naming the query and how much history it was shown."""

    name = "notes"

    def __init__(self) -> None:
        self.requests: list[PromptRequest] = []

    @hookimpl
    async def prompt_contributions(self, request: PromptRequest) -> list[PromptBlock]:
        self.requests.append(request)
        return [PromptBlock(content=f"note about {request.query}")]


class Broken(Plugin):
    name = "broken"

    @hookimpl
    async def prompt_contributions(self, request: PromptRequest) -> list[PromptBlock]:
        if request.query == "hang":
            await asyncio.sleep(60)
        raise RuntimeError("contributor broke")


class Saved(Plugin):
    name = "saved"

    def __init__(self) -> None:
        self.saved: list[tuple[str, list[Message]]] = []
        self.deleted: list[tuple[str, list[int]]] = []
        self.changed: list[str] = []

    @hookimpl
    def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None:
        self.saved.append((session_id, list(messages)))

    @hookimpl
    def memory_messages_deleted(self, session_id: str, timestamps: Sequence[int]) -> None:
        self.deleted.append((session_id, list(timestamps)))

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.changed.append(session_id)


def make_host(*extra: Plugin, config: dict[str, Any] | None = None) -> Host:
    return Host(config or {}, [inmemory.MemoryInmemory(), Chat(), *extra], discover=False)


async def test_blocks_reach_the_model_before_the_last_user_message_and_are_never_saved() -> None:
    notes, model = Notes(), EchoLlm()
    async with make_host(Broken(), notes, model) as host:
        chat = host.plugin("chat")
        assert isinstance(chat, Chat)
        session = chat.session("s")
        assert not (await session.handle("first line")).err
        assert not (await session.handle("second line")).err
        prompt = model.model.prompts[-1]
        assert [m.role for m in prompt] == ["system", "user", "assistant", "system", "user"]
        assert prompt[3].content == "note about second line"
        assert prompt[4].content == "second line"
        # the contributor saw the prompt it was asked about (for dedup), query last
        assert notes.requests[-1].history[-1].content == "second line"
        assert notes.requests[-1].platform == "cli"
        stored = await host.capability(memory).use.get_history("s", math.inf)
        assert [m.content for m in stored if m.role == "user"] == ["first line", "second line"]
        assert all("note about" not in (m.content or "") for m in stored)
        shown = await session.handle("/recall")
        assert shown.out == ["from notes:", "  note about second line"]


async def test_a_hanging_contributor_costs_its_time_limit_and_not_the_turn() -> None:
    notes = Notes()
    config = {"plugins": {"chat": {"contribution_timeout": 0.2}}}
    async with make_host(Broken(), notes, config=config) as host:
        chat = host.plugin("chat")
        assert isinstance(chat, Chat)
        reply = await chat.session("s").handle("hang")
        assert not reply.err
        # the stand-in counts what plugins added, and never quotes it into a stored reply
        assert "Plugins added 1 block to the prompt" in reply.out[0]
        assert "note about hang" not in reply.out[0]


async def test_every_saved_message_is_announced_as_stored_and_undo_takes_the_last_turn() -> None:
    saved = Saved()
    async with make_host(saved) as host:
        chat = host.plugin("chat")
        assert isinstance(chat, Chat)
        session = chat.session("s")
        for line in ("one", "two", "three"):
            assert not (await session.handle(line)).err
        stored = await host.capability(memory).use.get_history("s", math.inf)
        announced = [m for _, batch in saved.saved for m in batch]
        assert announced == stored
        stamps = [m.timestamp for m in stored]
        assert stamps == sorted(set(stamps)), "every message has its own timestamp"

        undone = await session.handle("/undo")
        assert undone.out[0] == "undone: 2 messages deleted"
        assert undone.out[1] == "  user> three"
        assert saved.deleted == [("s", stamps[4:])]
        assert saved.changed == ["s"]
        left = await host.capability(memory).use.get_history("s", math.inf)
        assert [m.content for m in left if m.role == "user"] == ["one", "two"]
        await session.handle("/undo")
        await session.handle("/undo")
        refused = await session.handle("/undo")
        assert refused.err == ["error: nothing to undo in session 's'"]


class Huge(Plugin):
    name = "huge"

    @hookimpl
    async def prompt_contributions(self, request: PromptRequest) -> list[PromptBlock]:
        return [PromptBlock(content="word " * 5000), PromptBlock(content="small note")]


async def test_a_block_that_does_not_fit_the_window_is_left_out() -> None:
    model = EchoLlm()  # a 2000-token window
    config = {"plugins": {"chat": {"max_reply_tokens": 200}}}
    async with make_host(Huge(), model, config=config) as host:
        chat = host.plugin("chat")
        assert isinstance(chat, Chat)
        assert not (await chat.session("s").handle("hello")).err
        prompt = model.model.prompts[-1]
        added = [m.content for m in prompt if m.metadata and "prompt_contribution" in m.metadata]
        assert added == ["small note"]
