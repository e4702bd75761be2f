"""Compression under ADK's own ``Runner``: the summary of archived turns is replayed in front
of the active events (so the model sees it), and the model's usage reported on the events
(``usage_metadata``) lets memory-summary compress a long session by itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import compression, memory
from aalis_google_adk import AalisSessionService, aalis_session_id
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
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
SID = aalis_session_id("app", "ada", "s1")


class CountingLlm(BaseLlm):
    """Answers every call with ``Noted <n>.``, reporting ``tokens`` tokens of usage; records
    the texts it was sent."""

    seen: list[list[str]] = []
    tokens: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.seen.append([p.text for c in llm_request.contents for p in c.parts or [] if p.text])
        usage = None
        if self.tokens:
            usage = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=self.tokens - 10,
                candidates_token_count=10,
                total_token_count=self.tokens,
            )
        yield LlmResponse(
            content=types.Content(
                role="model", parts=[types.Part(text=f"Noted {len(self.seen)}.")]
            ),
            usage_metadata=usage,
        )


def _config(tmp_path: Path, **summary: Any) -> dict[str, Any]:
    plugins: dict[str, Any] = {"disabled": DISABLED}
    if summary:
        plugins["memory-summary"] = summary
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": plugins,
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


async def _say(runner: Runner, text: str) -> None:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _event in runner.run_async(user_id="ada", session_id="s1", new_message=message):
        pass


def _runner(service: AalisSessionService, model: CountingLlm) -> Runner:
    return Runner(app_name="app", agent=LlmAgent(name="a", model=model), session_service=service)


async def test_a_compressed_session_is_replayed_with_its_summary_in_front(
    tmp_path: Path,
) -> None:
    async with Host(_config(tmp_path, history_limit=0, compress_at=0)) as host:
        service = AalisSessionService(host)
        model = CountingLlm(model="scripted", seen=[])
        runner = _runner(service, model)
        await service.create_session(app_name="app", user_id="ada", session_id="s1")
        for text in [
            "My passport number is X1234567.",
            "I prefer window seats.",
            "We land at 9 in the morning.",
        ]:
            await _say(runner, text)
        await host.capability(compression).use.compress(SID, "manual")
        active = await host.capability(memory).use.get_history(SID)
        assert len(active) < 6  # older turns archived

        await _say(runner, "Which seat do I like?")
        sent = model.seen[-1]
        assert sent[0].startswith("Summary of the earlier conversation:"), sent
        assert "passport" in sent[0]
        assert sent[-1] == "Which seat do I like?"

        # The summary is replayed, never stored: the session's events are what was said.
        session = await service.get_session(app_name="app", user_id="ada", session_id="s1")
        assert session is not None
        assert session.events[0].actions.compaction is not None
        stored = await host.capability(memory).use.get_history(SID)
        assert not any("Summary of the earlier" in (m.content or "") for m in stored)
        assert [m.content for m in stored][-2:] == ["Which seat do I like?", "Noted 4."]


async def test_the_models_usage_triggers_automatic_compression(tmp_path: Path) -> None:
    # The token line only (the count line off): 0.5 of a 1000-token window.
    config = _config(tmp_path, history_limit=0, compress_at=0.5)
    async with Host(config) as host:
        service = AalisSessionService(host, context_window=1000)
        model = CountingLlm(model="scripted", seen=[], tokens=100)
        runner = _runner(service, model)
        await service.create_session(app_name="app", user_id="ada", session_id="s1")
        for i in range(4):
            await _say(runner, f"My fact number {i} is {i * 7}, " + "and more words " * 20)
        handle = host.capability(compression).use
        assert await handle.summary(SID) is None  # 100 tokens of 1000: under the line

        model.tokens = 700  # the model now says the prompt fills 70% of the window
        await _say(runner, "One more fact.")
        summary = None
        for _ in range(100):  # the compression runs in the background
            summary = await handle.summary(SID)
            if summary is not None:
                break
            await asyncio.sleep(0.05)
        assert summary is not None
        await _say(runner, "What was fact 0?")
        assert model.seen[-1][0].startswith("Summary of the earlier conversation:")


async def test_without_a_context_window_the_count_line_triggers(tmp_path: Path) -> None:
    async with Host(_config(tmp_path, history_limit=6, compress_at=0)) as host:
        service = AalisSessionService(host)  # no window: the count line alone
        model = CountingLlm(model="scripted", seen=[], tokens=900)
        runner = _runner(service, model)
        await service.create_session(app_name="app", user_id="ada", session_id="s1")
        handle = host.capability(compression).use
        for i in range(4):
            await _say(runner, f"My fact number {i} is {i * 7}.")
        summary = None
        for _ in range(100):
            summary = await handle.summary(SID)
            if summary is not None:
                break
            await asyncio.sleep(0.05)
        assert summary is not None


@pytest.mark.parametrize("window", [0, -1, 1.5, True])
async def test_a_bad_context_window_is_refused(tmp_path: Path, window: Any) -> None:
    async with Host(_config(tmp_path)) as host:
        with pytest.raises((TypeError, ValueError), match="context_window"):
            AalisSessionService(host, context_window=window)
