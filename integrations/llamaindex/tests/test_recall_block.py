"""``AalisRecallBlock`` inside LlamaIndex's ``Memory``: what the user said in another session
reaches the prompt; another person's words never do (memory-vector over embedding-hash)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aalis_llamaindex import AalisDBChatStore, AalisRecallBlock
from llama_index.core.base.llms.types import ChatMessage
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


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    config = {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": DISABLED},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }
    async with Host(config) as started:
        yield started


def _memory(host: Host, session: str, user: str) -> Memory:
    return Memory.from_defaults(
        session_id=session,
        chat_store=AalisDBChatStore(host, user_id=user),
        memory_blocks=[AalisRecallBlock(host)],
    )


async def test_the_users_earlier_session_reaches_the_prompt(host: Host) -> None:
    old = _memory(host, "old", "ada")
    await old.aput(ChatMessage(role="user", content="My passport number is X1234567."))
    await old.aput(ChatMessage(role="assistant", content="Noted."))
    bob = _memory(host, "bob", "bob")
    await bob.aput(ChatMessage(role="user", content="My passport number is B7654321."))

    new = _memory(host, "new", "ada")
    await new.aput(ChatMessage(role="user", content="Hello again."))
    await new.aput(ChatMessage(role="assistant", content="Hi."))
    await new.aput(ChatMessage(role="user", content="What is my passport number?"))
    prompt = await new.aget()
    system = "\n".join(str(m.content) for m in prompt if m.role.value == "system")
    assert "X1234567" in system
    assert "B7654321" not in system
    assert "AalisRecall" in system  # LlamaIndex names the block in the prompt


async def test_no_query_no_session_no_block(host: Host) -> None:
    block = AalisRecallBlock(host)
    assert await block.aget([], session_id="s") == ""
    assert await block.aget([ChatMessage(role="user", content="hi")]) == ""
