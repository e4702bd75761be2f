"""Agents run by the SDK's own ``Runner`` on ``AalisSession``, with the SDK's ``ScriptedModel``.

The reference is the SDK's built-in ``SQLiteSession``: the same scripted conversation run on
both must leave the same items, and the model must be sent the same input each turn.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aalis_agent import SyncHost
from aalis_api_memory import compression, memory
from aalis_openai_agents import ITEM_KEY, AalisSession
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from aalis_core import Host


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _script() -> list[Any]:
    return [
        [assistant_message("Hello Ada!", item_id="msg_1")],
        [function_call("weather", {"city": "Lisbon"}, call_id="call_1", item_id="fc_1")],
        [assistant_message("It is sunny in Lisbon.", item_id="msg_2")],
        [assistant_message("You are Ada.", item_id="msg_3")],
    ]


async def _conversation(session: Any) -> tuple[list[Any], ScriptedModel]:
    model = ScriptedModel(_script())
    agent = Agent(name="trip", instructions="Be brief.", model=model, tools=[weather])
    for text in ["Hi, I am Ada.", "Weather in Lisbon?", "Who am I?"]:
        await Runner.run(agent, text, session=session)
    model.assert_complete()
    return [call.input for call in model.calls], model


async def test_a_run_leaves_the_same_items_as_the_sdks_sqlite_session(host: Host) -> None:
    reference = SQLiteSession("trip")  # the SDK's default: an in-memory database
    expected_inputs, _ = await _conversation(reference)
    expected_items = await reference.get_items()

    session = AalisSession("trip", host)
    inputs, _ = await _conversation(session)

    assert await session.get_items() == expected_items
    assert inputs == expected_inputs  # the model saw exactly what it sees on SQLiteSession
    # 3 user turns, 3 assistant messages, one call and its output
    assert [i.get("type", "message") for i in expected_items].count("function_call") == 1
    assert len(expected_items) == 8

    # Aalis sees an ordinary conversation: the call as a tool call, the output as a tool
    # message, every message with an id of its own.
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
    call = stored[3]
    assert call.tool_calls is not None
    assert call.tool_calls[0].name == "weather"
    assert json.loads(call.tool_calls[0].arguments) == {"city": "Lisbon"}
    assert stored[4].tool_call_id == "call_1"
    assert stored[4].content == "sunny in Lisbon"
    assert stored[7].content == "You are Ada."
    assert all(m.id for m in stored)
    assert len({m.id for m in stored}) == 8
    assert all((m.metadata or {}).get("platform") == "openai-agents" for m in stored)


async def test_a_new_host_on_the_same_file_continues_the_conversation(
    config: dict[str, Any],
) -> None:
    async with Host(config) as first:
        await Runner.run(
            Agent(name="a", model=ScriptedModel([[assistant_message("Noted.")]])),
            "My cat is Miso.",
            session=AalisSession("s", first),
        )
    model = ScriptedModel([[assistant_message("Miso.")]])
    async with Host(config) as second:
        await Runner.run(
            Agent(name="a", model=model), "Cat's name?", session=AalisSession("s", second)
        )
    sent = model.calls[0].input
    assert [i["content"] for i in sent if i.get("role") == "user"] == [
        "My cat is Miso.",
        "Cat's name?",
    ]


async def test_summary_and_recall_reach_the_model_through_the_input_callback(
    host: Host,
) -> None:
    session = AalisSession("trip", host, user_id="ada")
    agent = Agent(name="trip", model=ScriptedModel([]))
    model = agent.model
    assert isinstance(model, ScriptedModel)
    for i, text in enumerate(
        [
            "My passport number is X1234567.",
            "I prefer window seats.",
            "We land at 9 in the morning.",
        ]
    ):
        model.enqueue([assistant_message(f"Noted {i}.", item_id=f"msg_{i}")])
        await Runner.run(agent, text, session=session)
    await host.capability(compression).use.compress("trip", "manual")
    left = await session.get_items()
    assert len(left) < 6  # compression archived the older turns

    # Another session of the same person recalls across sessions (the `user` scope; a
    # session is someone's once a message of theirs is stored, so it says hello first).
    other = AalisSession("next-trip", host, user_id="ada")
    model.enqueue([assistant_message("Hello.", item_id="msg_h")])
    await Runner.run(agent, "Hello again.", session=other)
    model.enqueue([assistant_message("X1234567.", item_id="msg_x")])
    config = RunConfig(session_input_callback=other.input_callback)
    await Runner.run(agent, "What is my passport number?", session=other, run_config=config)
    await asyncio.sleep(0)
    sent = model.calls[-1].input
    system = [i["content"] for i in sent if i.get("role") == "system"]
    assert any("X1234567" in text for text in system), sent
    assert sent[-1] == {"role": "user", "content": "What is my passport number?"}

    # The compressed session: the summary goes in front of the history.
    model.enqueue([assistant_message("Window.", item_id="msg_w")])
    config = RunConfig(session_input_callback=session.input_callback)
    await Runner.run(agent, "Which seat do I like?", session=session, run_config=config)
    sent = model.calls[-1].input
    assert sent[0]["role"] == "system"
    assert sent[0]["content"].startswith("Summary of the earlier conversation:")
    assert "passport" in sent[0]["content"]

    # Neither the summary nor the recall block was saved as an item.
    for s in (session, other):
        assert all(i.get("role") != "system" for i in await s.get_items())
    stored = await host.capability(memory).use.get_history("next-trip")
    assert [m.role for m in stored] == ["user", "assistant"] * 2
    assert stored[0].metadata is not None
    assert stored[0].metadata["user_id"] == "ada"


def test_a_sync_host_serves_an_agent_on_another_loop(config: dict[str, Any]) -> None:
    with SyncHost(config) as aalis:
        session = AalisSession("sync", aalis)
        model = ScriptedModel([[assistant_message("Hi!")]])
        result = Runner.run_sync(Agent(name="a", model=model), "Hello", session=session)
        assert result.final_output == "Hi!"
        assert [m.content for m in aalis.memory.get_history("sync")] == ["Hello", "Hi!"]
        stored = aalis.memory.get_history("sync")[1]
        assert stored.metadata is not None
        assert stored.metadata[ITEM_KEY]["id"] == "scripted-message"


async def test_a_long_session_compresses_by_itself_and_the_model_gets_the_summary(
    config: dict[str, Any],
) -> None:
    config["plugins"]["memory-summary"] = {"history_limit": 6}
    async with Host(config) as host:
        session = AalisSession("long", host)
        model = ScriptedModel([])
        agent = Agent(name="a", model=model)
        run = RunConfig(session_input_callback=session.input_callback)
        for i in range(5):
            model.enqueue([assistant_message(f"Reply {i}.", item_id=f"m{i}")])
            await Runner.run(
                agent, f"My fact number {i} is {i * 7}.", session=session, run_config=run
            )
        summary = None
        for _ in range(100):  # the compression runs in the background
            summary = await host.capability(compression).use.summary("long")
            if summary is not None:
                break
            await asyncio.sleep(0.05)
        assert summary is not None
        assert len(await session.get_items()) < 10
        model.enqueue([assistant_message("ok", item_id="last")])
        await Runner.run(agent, "What was fact 0?", session=session, run_config=run)
        first = model.calls[-1].input[0]
        assert first["role"] == "system"
        assert first["content"].startswith("Summary of the earlier conversation:")


async def test_the_first_turn_of_a_new_session_recalls_the_persons_other_sessions(
    host: Host,
) -> None:
    model = ScriptedModel([])
    agent = Agent(name="a", model=model)

    async def say(sid: str, user: str, text: str) -> list[Any]:
        session = AalisSession(sid, host, user_id=user)
        model.enqueue([assistant_message("Noted.", item_id=f"m{len(model.calls)}")])
        run = RunConfig(session_input_callback=session.input_callback)
        await Runner.run(agent, text, session=session, run_config=run)
        return list(model.calls[-1].input)

    await say("ada-old", "ada", "My passport number is X1234567.")
    await say("ada-tea", "ada", "I like tea.")
    await say("bob", "bob", "My passport number is B7654321.")
    sent = await say("ada-new", "ada", "What is my passport number?")  # its first turn
    system = "\n".join(i["content"] for i in sent if i.get("role") == "system")
    assert "X1234567" in system
    assert "B7654321" not in system
    assert sent[-1] == {"role": "user", "content": "What is my passport number?"}
    sent = await say("bob-new", "bob", "What is my passport number?")
    system = "\n".join(i["content"] for i in sent if i.get("role") == "system")
    assert "B7654321" in system
    assert "X1234567" not in system

    # The question is stored once (saved before recall was asked; the SDK's own save of
    # it is skipped), the recall block never.
    stored = await host.capability(memory).use.get_history("ada-new")
    assert [(m.role, m.content) for m in stored] == [
        ("user", "What is my passport number?"),
        ("assistant", "Noted."),
    ]
    assert stored[0].metadata is not None
    assert stored[0].metadata["user_id"] == "ada"
    assert await AalisSession("ada-new", host).get_items() == [
        {"role": "user", "content": "What is my passport number?"},
        stored[1].metadata[ITEM_KEY],
    ]
