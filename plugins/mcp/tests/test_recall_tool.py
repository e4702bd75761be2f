"""``search_recall`` is offered exactly when a ``recall`` provider is bound (the capability
is matched by name, so the server needs no recall contract installed). In-process, through
the SDK's own client connected to the server object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from aalis_api_memory import RecentMessagesQuery, memory
from aalis_plugin_mcp import Mcp
from aalis_schema_message import Message
from mcp import Client

from aalis_core import Capability, Host, Plugin


@attrs.frozen
class Hit:
    session_id: str
    message: Message
    score: float
    neighbours: tuple[Message, ...] = ()
    source: str | None = "lexical"


class WordRecall:
    """A lexical stand-in for semantic recall: messages sharing words with the query."""

    def __init__(self, store: Any) -> None:
        self._store = store

    async def recall(
        self, session_id: str, query: str, *, k: int | None = None, platform: str | None = None
    ) -> list[Hit]:
        words = set(query.lower().split())
        records = await self._store.use.get_recent_messages_across_sessions(
            RecentMessagesQuery(limit=100)
        )
        hits = []
        for record in records:
            shared = words & set((record.message.content or "").lower().split())
            if shared:
                hits.append(Hit(record.session_id, record.message, len(shared) / len(words)))
        hits.sort(key=lambda h: -h.score)
        return hits[: k or 5]


class RecallProvider(Plugin):
    name = "test-recall"
    uses = {"memory": memory}
    provides = (Capability("recall", object),)

    async def start(self, ctx: Any) -> None:
        ctx.provide(self.provides[0], WordRecall(ctx.caps.memory))


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": ["memory-mongodb", "llm-openai", "memory-vector", "user-relation"]},
    }


async def _tools(host: Host, plugin: Mcp) -> tuple[list[str], Any]:
    server = plugin.server()
    async with Client(server) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        result = await client.call_tool(
            "search_recall", {"session_id": "s1", "query": "paris trip", "k": 2}
        )
        return names, result


async def test_search_recall_with_a_recall_provider(tmp_path: Path) -> None:
    plugin = Mcp()
    async with Host(_config(tmp_path), [plugin, RecallProvider()]) as host:
        store = host.capability(memory).use
        await store.save_message("s1", Message(role="user", content="my paris trip", timestamp=1))
        await store.save_message("s2", Message(role="user", content="cooking", timestamp=2))
        names, result = await _tools(host, plugin)
    assert "search_recall" in names
    assert not result.is_error
    hits = result.structured_content["hits"]
    assert [h["message"]["content"] for h in hits] == ["my paris trip"]
    assert hits[0]["score"] == pytest.approx(1.0)
    assert hits[0]["source"] == "lexical"  # why it came, as the provider said


async def test_no_search_recall_without_one(tmp_path: Path) -> None:
    plugin = Mcp()
    async with Host(_config(tmp_path), [plugin]) as host:
        names, result = await _tools(host, plugin)
    assert "search_recall" not in names
    assert result.is_error
    assert "no recall provider" in result.content[0].text
