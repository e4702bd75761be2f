"""The history processor on the first run of a new session, and the model's usage reported
on save so memory-summary compresses by itself: Pydantic AI's own ``FunctionModel`` over a
real SQLite host (memory-summary, memory-vector over embedding-hash)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aalis_api_memory import compression, memory
from aalis_pydantic_ai import AalisHistory
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from aalis_core import Host

DISABLED = [
    "memory-mongodb",
    "memory-postgres",
    "vectorstore-pgvector",
    "llm-openai",
    "embedding-openai",
    "embedding-local",
]


def _config(tmp_path: Path, **summary: Any) -> dict[str, Any]:
    plugins: dict[str, Any] = {"disabled": DISABLED}
    if summary:
        plugins["memory-summary"] = summary
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": plugins,
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


class Model:
    """Says "Noted."; reports ``tokens`` of usage when set; records the system parts sent."""

    def __init__(self) -> None:
        self.system: list[str] = []
        self.firsts: list[str] = []
        self.tokens = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts]
        self.system.append(
            "\n".join(
                p.content
                for m in messages
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, SystemPromptPart)
            )
        )
        self.firsts.append(str(parts[0]) if parts else "")
        usage = (
            RequestUsage(input_tokens=self.tokens - 10, output_tokens=10)
            if self.tokens
            else RequestUsage()
        )
        return ModelResponse(parts=[TextPart("Noted.")], usage=usage)


async def _turn(agent: Agent[None, str], history: AalisHistory, text: str) -> list[Any]:
    result = await agent.run(text, message_history=await history.load())
    await history.save(result.new_messages())
    return ModelMessagesTypeAdapter.dump_python(result.new_messages(), mode="json")


async def test_the_first_run_of_a_new_session_recalls_the_persons_other_sessions(
    tmp_path: Path,
) -> None:
    async with Host(_config(tmp_path)) as host:
        model = Model()

        def agent(history: AalisHistory) -> Agent[None, str]:
            return Agent(FunctionModel(model), capabilities=[ProcessHistory(history.processor)])

        old = AalisHistory("ada-old", host, user_id="ada")
        await _turn(agent(old), old, "My passport number is X1234567.")
        tea = AalisHistory("ada-tea", host, user_id="ada")
        await _turn(agent(tea), tea, "I like tea.")
        bob = AalisHistory("bob", host, user_id="bob")
        await _turn(agent(bob), bob, "My passport number is B7654321.")

        new = AalisHistory("ada-new", host, user_id="ada")
        ran = await _turn(agent(new), new, "What is my passport number?")  # its first run
        assert "X1234567" in model.system[-1]
        assert "B7654321" not in model.system[-1]
        bob2 = AalisHistory("bob-new", host, user_id="bob")
        await _turn(agent(bob2), bob2, "What is my passport number?")
        assert "B7654321" in model.system[-1]
        assert "X1234567" not in model.system[-1]

        # The question was saved once, before the model was asked; the recall block never.
        stored = await host.capability(memory).use.get_history("ada-new")
        assert [(m.role, m.content) for m in stored] == [
            ("user", "What is my passport number?"),
            ("assistant", "Noted."),
        ]
        assert stored[0].metadata is not None
        assert stored[0].metadata["user_id"] == "ada"
        # and the run's messages load back exactly as Pydantic AI returned them
        assert ModelMessagesTypeAdapter.dump_python(await new.load(), mode="json") == ran


async def test_the_models_usage_triggers_automatic_compression(tmp_path: Path) -> None:
    async with Host(_config(tmp_path, history_limit=0, compress_at=0.5)) as host:
        history = AalisHistory("long", host, context_window=1000)
        model = Model()
        model.tokens = 100
        agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(history.processor)])
        for i in range(4):
            await _turn(agent, history, f"My fact number {i} is {i * 7}, " + "and more words " * 20)
        handle = host.capability(compression).use
        assert await handle.summary("long") is None  # 100 of 1000 tokens: under the line
        model.tokens = 700
        await _turn(agent, history, "One more fact.")
        summary = None
        for _ in range(100):  # the compression runs in the background
            summary = await handle.summary("long")
            if summary is not None:
                break
            await asyncio.sleep(0.05)
        assert summary is not None
        await _turn(agent, history, "What was fact 0?")
        assert model.firsts[-1].startswith("Summary of the earlier conversation:")


async def test_without_a_context_window_the_count_line_triggers(tmp_path: Path) -> None:
    async with Host(_config(tmp_path, history_limit=6, compress_at=0)) as host:
        history = AalisHistory("long", host)
        model = Model()
        model.tokens = 900
        agent = Agent(FunctionModel(model))
        for i in range(4):
            await _turn(agent, history, f"My fact number {i} is {i * 7}.")
        summary = None
        for _ in range(100):
            summary = await host.capability(compression).use.summary("long")
            if summary is not None:
                break
            await asyncio.sleep(0.05)
        assert summary is not None


@pytest.mark.parametrize("window", [0, -5, 2.5, True])
async def test_a_bad_context_window_is_refused(tmp_path: Path, window: Any) -> None:
    async with Host(_config(tmp_path)) as host:
        with pytest.raises((TypeError, ValueError), match="context_window"):
            AalisHistory("s", host, context_window=window)


async def test_a_run_resumed_from_a_stored_prompt_does_not_save_it_twice(tmp_path: Path) -> None:
    async with Host(_config(tmp_path)) as host:
        history = AalisHistory("s", host, user_id="ada")
        model = Model()
        agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(history.processor)])
        await history.save([ModelRequest(parts=[UserPromptPart(content="Still there?")])])
        result = await agent.run(None, message_history=await history.load())
        await history.save(result.new_messages())
        stored = await host.capability(memory).use.get_history("s")
        assert [(m.role, m.content) for m in stored] == [
            ("user", "Still there?"),
            ("assistant", "Noted."),
        ]


async def test_a_failing_usage_report_never_fails_the_save(tmp_path: Path) -> None:
    class CannotCount:
        def __init__(self, real: Any) -> None:
            self._real = real

        def __getattr__(self, name: str) -> Any:
            return getattr(self._real, name)

        async def count_history(self, session_id: str) -> int:
            raise RuntimeError("count failed")

    async with Host(_config(tmp_path)) as host:
        store = CannotCount(host.capability(memory).use)
        history = AalisHistory("s", host, memory=SimpleNamespace(use=store))
        result = await Agent(FunctionModel(Model())).run("hello")
        await history.save(result.new_messages())  # the report fails, and is logged
        assert [m.content for m in await host.capability(memory).use.get_history("s")] == [
            "hello",
            "Noted.",
        ]
