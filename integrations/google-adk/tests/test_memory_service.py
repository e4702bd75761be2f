"""``AalisMemoryService.search_memory`` through recall (memory-vector over embedding-hash),
scoped to the user: another user's sessions never answer."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

import pytest
from aalis_google_adk import AalisMemoryService, AalisSessionService
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types

from aalis_core import Host

DISABLED = [
    "memory-mongodb",
    "memory-postgres",
    "vectorstore-pgvector",
    "llm-openai",
    "embedding-openai",
    "embedding-local",
]


@pytest.fixture
async def host(tmp_path: Path) -> AsyncGenerator[Host, None]:
    config = {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": DISABLED},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }
    async with Host(config) as started:
        yield started


def _said(author: str, text: str) -> Event:
    role = "user" if author == "user" else "model"
    return Event(author=author, content=types.Content(role=role, parts=[types.Part(text=text)]))


async def _session(service: AalisSessionService, user: str, sid: str, lines: list[str]) -> None:
    session = await service.create_session(app_name="app", user_id=user, session_id=sid)
    for text in lines:
        await service.append_event(session, _said("user", text))
        await service.append_event(session, _said("helper", "Noted."))


async def test_search_memory_finds_the_users_own_words_only(host: Host) -> None:
    sessions = AalisSessionService(host)
    await _session(sessions, "ada", "s1", ["My passport number is X1234567.", "I like tea."])
    await _session(sessions, "bob", "b1", ["My passport number is B7654321."])
    await _session(sessions, "ada", "s2", ["Plan the Lisbon trip."])
    found = await AalisMemoryService(host).search_memory(
        app_name="app", user_id="ada", query="what is my passport number"
    )
    texts = [m.content.parts[0].text for m in found.memories if m.content.parts]
    assert any("X1234567" in (t or "") for t in texts)
    assert not any("B7654321" in (t or "") for t in texts)
    assert (
        await AalisMemoryService(host).search_memory(app_name="app", user_id="eve", query="x")
    ).memories == []


async def test_a_session_kept_elsewhere_is_copied_in_and_found(host: Host) -> None:
    other = InMemorySessionService()
    session = await other.create_session(app_name="app", user_id="ada", session_id="mem")
    await other.append_event(session, _said("user", "My cat is called Miso."))
    service = AalisMemoryService(host)
    await service.add_session_to_memory(session)
    await service.add_session_to_memory(session)  # twice: copied once
    # The user needs a session the session service knows to anchor the search.
    sessions = AalisSessionService(host)
    await _session(sessions, "ada", "now", ["hello"])
    found = await service.search_memory(app_name="app", user_id="ada", query="cat called Miso")
    texts = [m.content.parts[0].text for m in found.memories if m.content.parts]
    assert texts.count("My cat is called Miso.") == 1


class RecordingLlm(BaseLlm):
    """Says "Noted."; records everything it was sent (system instruction and contents)."""

    seen: list[str] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        texts = [p.text for c in llm_request.contents for p in c.parts or [] if p.text]
        system = llm_request.config.system_instruction if llm_request.config else None
        self.seen.append("\n".join([str(system or ""), *texts]))
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Noted.")]))


async def test_the_first_turn_of_a_new_session_recalls_the_persons_other_sessions(
    host: Host,
) -> None:
    sessions = AalisSessionService(host)
    model = RecordingLlm(model="scripted", seen=[])
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="a", model=model, tools=[PreloadMemoryTool()]),
        session_service=sessions,
        memory_service=AalisMemoryService(host),
    )

    async def say(user: str, sid: str, text: str) -> str:
        if await sessions.get_session(app_name="app", user_id=user, session_id=sid) is None:
            await sessions.create_session(app_name="app", user_id=user, session_id=sid)
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _event in runner.run_async(user_id=user, session_id=sid, new_message=message):
            pass
        return model.seen[-1]

    await say("ada", "s1", "My passport number is X1234567.")
    await say("ada", "s2", "I like tea.")
    await say("bob", "b1", "My passport number is B7654321.")
    sent = await say("ada", "s3", "What is my passport number?")  # s3's first turn
    assert "X1234567" in sent
    assert "B7654321" not in sent
    sent = await say("bob", "b2", "What is my passport number?")
    assert "B7654321" in sent
    assert "X1234567" not in sent
