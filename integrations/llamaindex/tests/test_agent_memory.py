"""LlamaIndex's own ``FunctionAgent`` (a scripted ``MockFunctionCallingLLM``) on a ``Memory``
over ``AalisDBChatStore`` and ``AalisRecallBlock``: the first turn of a new session recalls
the person's other sessions, and the store's reports let memory-summary compress a long
session by itself, whose summary then reaches the model (real SQLite host, memory-summary,
memory-vector over embedding-hash)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aalis_api_memory import compression, memory
from aalis_llamaindex import AalisDBChatStore, AalisRecallBlock
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory

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


class Scripted:
    """The LLM's answers ("Noted."); records the system text of every call."""

    def __init__(self) -> None:
        self.system: list[str] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.system.append("\n".join(str(m.content) for m in messages if m.role.value == "system"))
        return ChatMessage(role="assistant", content="Noted.")


async def _say(host: Host, llm: Scripted, session: str, user: str, text: str) -> str:
    agent = FunctionAgent(
        llm=MockFunctionCallingLLM(response_generator=llm), tools=[], streaming=False
    )
    mem = Memory.from_defaults(
        session_id=session,
        chat_store=AalisDBChatStore(host, user_id=user),
        memory_blocks=[AalisRecallBlock(host)],
    )
    await agent.run(user_msg=text, memory=mem)
    return llm.system[-1]


async def test_the_first_turn_of_a_new_session_recalls_the_persons_other_sessions(
    tmp_path: Path,
) -> None:
    async with Host(_config(tmp_path)) as host:
        llm = Scripted()
        await _say(host, llm, "ada-old", "ada", "My passport number is X1234567.")
        await _say(host, llm, "ada-tea", "ada", "I like tea.")
        await _say(host, llm, "bob", "bob", "My passport number is B7654321.")
        sent = await _say(host, llm, "ada-new", "ada", "What is my passport number?")
        assert "X1234567" in sent
        assert "B7654321" not in sent
        sent = await _say(host, llm, "bob-new", "bob", "What is my passport number?")
        assert "B7654321" in sent
        assert "X1234567" not in sent
        stored = await host.capability(memory).use.get_history("ada-new")
        assert [(m.role, m.content) for m in stored] == [
            ("user", "What is my passport number?"),
            ("assistant", "Noted."),
        ]


async def test_a_long_session_compresses_by_itself_and_the_model_gets_the_summary(
    tmp_path: Path,
) -> None:
    async with Host(_config(tmp_path, history_limit=6, compress_at=0)) as host:
        llm = Scripted()
        for i in range(4):
            await _say(host, llm, "long", "ada", f"My fact number {i} is {i * 7}.")
        handle = host.capability(compression).use
        summary = None
        for _ in range(100):  # the compression runs in the background
            summary = await handle.summary("long")
            if summary is not None:
                break
            await asyncio.sleep(0.05)
        assert summary is not None
        sent = await _say(host, llm, "long", "ada", "What was fact 0?")
        assert "Summary of the earlier conversation:" in sent
