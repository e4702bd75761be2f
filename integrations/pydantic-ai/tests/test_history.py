"""Pydantic AI agents run on ``AalisHistory`` with the framework's own ``FunctionModel``, over
a real SQLite host (memory-summary and memory-vector with embedding-hash discovered)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import SyncHost
from aalis_api_memory import compression, memory
from aalis_pydantic_ai import MESSAGE_KEY, AalisHistory
from aalis_schema_message import Message, ToolCall
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from aalis_core import Host

DISABLED = [
    "memory-mongodb",
    "memory-postgres",
    "vectorstore-pgvector",
    "llm-openai",
    "embedding-openai",
    "embedding-local",
]


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": DISABLED},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    async with Host(_config(tmp_path)) as started:
        yield started


class Script:
    """A FunctionModel body: records what the model is sent, answers from a list (a
    ``("call", name, args)`` entry asks for a tool)."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        reply = self.replies.pop(0)
        if isinstance(reply, tuple):
            return ModelResponse(parts=[ToolCallPart(reply[1], reply[2], tool_call_id="c1")])
        return ModelResponse(parts=[TextPart(reply)])


def _agent(script: Script, **kwargs: Any) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(script), **kwargs)

    @agent.tool_plain
    def weather(city: str) -> str:
        return f"sunny in {city}"

    return agent


def _json(messages: list[ModelMessage]) -> list[Any]:
    return ModelMessagesTypeAdapter.dump_python(messages, mode="json")


async def test_a_conversation_round_trips_and_the_model_sees_the_same(host: Host) -> None:
    history = AalisHistory("trip", host)
    script = Script(["Hello Ada.", ("call", "weather", {"city": "Lisbon"}), "Sunny.", "Ada."])
    agent = _agent(script)
    kept: list[ModelMessage] = []  # the reference: the history kept in a Python list
    for text in ["I am Ada.", "Weather in Lisbon?", "Who am I?"]:
        loaded = await history.load()
        assert _json(loaded) == _json(kept)  # lossless: parts, ids, usage, timestamps
        result = await agent.run(text, message_history=loaded)
        await history.save(result.new_messages())
        kept = result.all_messages()
    assert _json(await history.load()) == _json(kept)
    user_texts = [
        p.content
        for m in script.seen[-1]
        for p in getattr(m, "parts", [])
        if isinstance(p, UserPromptPart)
    ]
    assert user_texts == ["I am Ada.", "Weather in Lisbon?", "Who am I?"]

    stored = await host.capability(memory).use.get_history("trip")
    assert [m.role for m in stored] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert stored[3].tool_calls == (
        ToolCall(id="c1", name="weather", arguments='{"city":"Lisbon"}'),
    )
    assert (stored[4].tool_call_id, stored[4].content) == ("c1", "sunny in Lisbon")
    assert all(m.id for m in stored)
    assert all(MESSAGE_KEY in (m.metadata or {}) for m in stored)


async def test_messages_of_other_writers_load_as_model_messages(host: Host) -> None:
    store = host.capability(memory).use
    for message in [
        Message(role="user", content="hi", timestamp=1),
        Message(
            role="assistant",
            content="looking",
            tool_calls=(ToolCall(id="k", name="find", arguments="{}"),),
            timestamp=2,
        ),
        Message(role="tool", content="found", tool_call_id="k", name="find", timestamp=3),
        Message(role="notice", content="turn", kind="event-marker", timestamp=4),
    ]:
        await store.save_message("chat", message)
    loaded = await AalisHistory("chat", host).load()
    assert [type(m).__name__ for m in loaded] == ["ModelRequest", "ModelResponse", "ModelRequest"]
    assert isinstance(loaded[1], ModelResponse)
    assert [type(p).__name__ for p in loaded[1].parts] == ["TextPart", "ToolCallPart"]
    assert isinstance(loaded[2], ModelRequest)
    part = loaded[2].parts[0]
    assert isinstance(part, ToolReturnPart)
    assert (part.tool_call_id, part.content) == ("k", "found")


async def test_the_processor_puts_summary_and_recall_first_and_saves_neither(
    host: Host,
) -> None:
    history = AalisHistory("trip", host, user_id="ada")
    script = Script(["Noted.", "Noted.", "Noted.", "X1234567."])
    agent = _agent(script, capabilities=[ProcessHistory(history.processor)])
    for text in ["My passport number is X1234567.", "I like window seats.", "We land at 9."]:
        result = await agent.run(text, message_history=await history.load())
        await history.save(result.new_messages())
    await host.capability(compression).use.compress("trip", "manual")
    result = await agent.run("What is my passport number?", message_history=await history.load())
    first = script.seen[-1][0]
    assert isinstance(first, ModelRequest)
    system = [p.content for p in first.parts if isinstance(p, SystemPromptPart)]
    assert system[0].startswith("Summary of the earlier conversation:")
    assert "passport" in system[0]
    await history.save(result.new_messages())
    assert not any(isinstance(p, SystemPromptPart) for m in await history.load() for p in m.parts)


def test_the_sync_side_on_a_sync_host(tmp_path: Path) -> None:
    with SyncHost(_config(tmp_path)) as aalis:
        history = AalisHistory("s", aalis)
        script = Script(["One."])
        result = _agent(script).run_sync("1", message_history=history.load_sync())
        history.save_sync(result.new_messages())
        assert [m.content for m in aalis.memory.get_history("s")] == ["1", "One."]
        rows = aalis.run(lambda: history.clear())
        assert any(r.type == "context" and r.success for r in rows)
        assert history.load_sync() == []
