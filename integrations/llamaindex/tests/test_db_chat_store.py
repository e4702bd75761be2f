"""``AalisDBChatStore`` under LlamaIndex's own ``Memory`` on a real SQLite host: the messages
``Memory`` flushes out of its token budget are archived in Aalis (ACTIVE/ARCHIVED is the
store's archive), and every store operation keeps to the statuses."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aalis_api_memory import memory
from aalis_llamaindex import AalisDBChatStore
from aalis_plugin_memory_sqlite import MemorySqlite
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus

from aalis_core import Host

ACTIVE, ARCHIVED = MessageStatus.ACTIVE, MessageStatus.ARCHIVED


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite()], discover=False) as started:
        yield started


def _texts(messages: list[ChatMessage]) -> list[str | None]:
    return [m.content for m in messages]


async def test_memory_archives_what_leaves_its_budget_into_aalis(host: Host) -> None:
    store = AalisDBChatStore(host, user_id="ada")
    mem = Memory.from_defaults(
        session_id="s",
        chat_store=store,
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
    )
    for i in range(12):
        role = "user" if i % 2 == 0 else "assistant"
        await mem.aput(ChatMessage(role=role, content=f"message number {i} about the trip"))
    shown = await mem.aget()
    archived = await store.get_messages("s", status=ARCHIVED)
    active = await store.get_messages("s", status=ACTIVE)
    assert archived  # Memory flushed its oldest messages ...
    assert _texts(archived) + _texts(active) == [
        f"message number {i} about the trip" for i in range(12)
    ]
    assert _texts(shown)[-1] == "message number 11 about the trip"
    # ... into the Aalis archive: what `aalis history s --full` shows as archived.
    aalis = host.capability(memory).use
    assert len(await aalis.get_full_history("s", math.inf)) == 12
    assert await aalis.count_history("s") == len(active)
    assert await store.count_messages("s", status=None) == 12
    stored = await aalis.get_full_history("s", math.inf)
    assert stored[0].metadata is not None
    assert stored[0].metadata["user_id"] == "ada"


async def test_the_store_operations_keep_to_the_statuses(host: Host) -> None:
    store = AalisDBChatStore(host)
    await store.add_messages("k", [ChatMessage(role="user", content=str(i)) for i in range(6)])
    assert _texts(await store.archive_oldest_messages("k", 2)) == ["0", "1"]
    assert _texts(await store.get_messages("k", status=ARCHIVED)) == ["0", "1"]
    assert _texts(await store.get_messages("k")) == ["2", "3", "4", "5"]
    assert _texts(await store.get_messages("k", status=None, limit=2, offset=1)) == ["1", "2"]
    assert await store.count_messages("k") == 4
    assert await store.count_messages("k", status=ARCHIVED) == 2
    assert _texts(await store.delete_oldest_messages("k", 1)) == ["2"]
    deleted = await store.delete_message("k", 0)  # position in the whole history
    assert deleted is not None
    assert deleted.content == "0"
    await store.set_messages("k", [ChatMessage(role="user", content="new")])
    assert _texts(await store.get_messages("k", status=None)) == ["1", "new"]
    await store.delete_messages("k", status=ARCHIVED)
    assert _texts(await store.get_messages("k", status=None)) == ["new"]
    assert await store.get_keys() == ["k"]
    with pytest.raises(ValueError, match="ACTIVE"):
        await store.add_message("k", ChatMessage(role="user", content="x"), status=ARCHIVED)
    await store.delete_messages("k")  # the clear chain
    assert await store.get_messages("k", status=None) == []
