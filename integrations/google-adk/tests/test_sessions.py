"""``AalisSessionService`` under ADK's own ``Runner`` with a scripted model, beside ADK's
``InMemorySessionService`` on the same script, over a real SQLite host."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import memory
from aalis_google_adk import AalisSessionService, aalis_session_id
from aalis_plugin_memory_sqlite import MemorySqlite
from google.adk.agents import LlmAgent
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from aalis_core import Host


class ScriptedLlm(BaseLlm):
    """Answers from a list; a dict entry is a function call. Records what it was sent."""

    replies: list[Any] = []
    seen: list[list[str]] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.seen.append([p.text for c in llm_request.contents for p in c.parts or [] if p.text])
        reply = self.replies.pop(0)
        if isinstance(reply, dict):
            part = types.Part(
                function_call=types.FunctionCall(
                    id="call-1", name=reply["name"], args=reply["args"]
                )
            )
        else:
            part = types.Part(text=reply)
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def remember_city(city: str, tool_context: ToolContext) -> dict[str, str]:
    """Remember the user's city."""
    tool_context.state["user:city"] = city
    tool_context.state["app:calls"] = 1
    tool_context.state["temp:scratch"] = "never stored"
    tool_context.state["last_city"] = city
    return {"status": f"remembered {city}"}


YIELDED: list[Any] = []


async def _run(service: Any, script: list[Any], texts: list[str]) -> ScriptedLlm:
    model = ScriptedLlm(model="scripted", replies=list(script), seen=[])
    agent = LlmAgent(name="trip", model=model, instruction="Be brief.", tools=[remember_city])
    runner = Runner(app_name="app", agent=agent, session_service=service)
    if await service.get_session(app_name="app", user_id="ada", session_id="s1") is None:
        await service.create_session(
            app_name="app", user_id="ada", session_id="s1", state={"lang": "en"}
        )
    for text in texts:
        async for _event in runner.run_async(
            user_id="ada",
            session_id="s1",
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        ):
            YIELDED.append(_event)
    return model


SCRIPT: list[Any] = [
    "Hello Ada.",
    {"name": "remember_city", "args": {"city": "Lisbon"}},
    "Noted: Lisbon.",
    "You live in Lisbon.",
]
TEXTS = ["I am Ada.", "I live in Lisbon.", "Where do I live?"]


@pytest.fixture
async def host(tmp_path: Path) -> AsyncGenerator[Host, None]:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite()], discover=False) as started:
        yield started


def _plain(events: list[Any]) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json", exclude_none=True) for e in events]


async def test_a_run_matches_adks_in_memory_service(host: Host) -> None:
    reference = InMemorySessionService()
    expected_model = await _run(reference, SCRIPT, TEXTS)
    expected = await reference.get_session(app_name="app", user_id="ada", session_id="s1")

    service = AalisSessionService(host)
    YIELDED.clear()
    model = await _run(service, SCRIPT, TEXTS)
    got = await service.get_session(app_name="app", user_id="ada", session_id="s1")
    assert expected is not None
    assert got is not None
    assert model.seen == expected_model.seen  # the model was sent the same each turn
    assert len(got.events) == len(expected.events) == 8
    assert [e.author for e in got.events] == [e.author for e in expected.events]
    assert [e.content for e in got.events] == [e.content for e in expected.events]
    assert got.state == expected.state
    assert got.state["user:city"] == "Lisbon"
    assert "temp:scratch" not in got.state
    assert await service.get_user_state(app_name="app", user_id="ada") == {"city": "Lisbon"}

    # Aalis sees an ordinary conversation, with the person of the ADK user.
    stored = await host.capability(memory).use.get_history(aalis_session_id("app", "ada", "s1"))
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
    assert stored[3].tool_calls is not None
    assert stored[3].tool_calls[0].name == "remember_city"
    assert stored[0].metadata is not None
    assert (stored[0].metadata["platform"], stored[0].metadata["user_id"]) == ("adk:app", "ada")
    # Each event the runner produced comes back whole: ids, invocation ids, actions
    # (state deltas, minus temp: keys, as ADK's own services store them), timestamps.
    produced = {e.id: e for e in YIELDED[-6:] if not e.partial}
    for event in got.events:
        if event.author != "user":
            assert _plain([event]) == _plain([produced[event.id]])


async def test_sessions_survive_the_host_and_list_and_delete(tmp_path: Path) -> None:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite()], discover=False) as first:
        await _run(AalisSessionService(first), ["Hi."], ["hello"])
    async with Host(config, [MemorySqlite()], discover=False) as second:
        service = AalisSessionService(second)
        model = await _run(service, ["Again."], ["hello again"])
        assert model.seen[-1][:2] == ["hello", "Hi."]  # the earlier turn came back
        listed = await service.list_sessions(app_name="app", user_id="ada")
        assert [s.id for s in listed.sessions] == ["s1"]
        recent = await service.get_session(
            app_name="app",
            user_id="ada",
            session_id="s1",
            config=GetSessionConfig(num_recent_events=2),
        )
        assert recent is not None
        assert len(recent.events) == 2
        await service.delete_session(app_name="app", user_id="ada", session_id="s1")
        assert await service.get_session(app_name="app", user_id="ada", session_id="s1") is None
        history = await second.capability(memory).use.get_history(
            aalis_session_id("app", "ada", "s1")
        )
        assert history == []
        await service.create_session(app_name="app", user_id="u", session_id="x")
        with pytest.raises(AlreadyExistsError, match="already exists"):
            await service.create_session(app_name="app", user_id="u", session_id="x")
