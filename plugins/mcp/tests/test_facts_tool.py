"""``get_facts`` is offered exactly when a ``relation`` provider is bound (matched by name,
like ``search_recall``), and reads through ``about``. In-process, through the SDK's client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aalis_plugin_mcp import Mcp
from mcp import Client

from aalis_core import Capability, Host, Plugin


class _Fact:
    def __init__(self, value: str) -> None:
        self.value = value

    def to_json(self) -> dict[str, Any]:
        return {"attribute": "city", "value": self.value, "sources": ["m1"]}


class _Relation:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, int | None]] = []

    async def about(
        self, session_id: str, query: str | None = None, *, limit: int | None = None
    ) -> list[_Fact]:
        self.calls.append((session_id, query, limit))
        return [_Fact("Berlin")]


class RelationProvider(Plugin):
    name = "test-relation"
    provides = (Capability("relation", object),)

    def __init__(self) -> None:
        self.service = _Relation()

    async def start(self, ctx: Any) -> None:
        ctx.provide(self.provides[0], self.service)


def _config(tmp_path: Path, *disabled: str) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": ["memory-mongodb", "llm-openai", "memory-vector", *disabled]},
    }


async def _call(plugin: Mcp, arguments: dict[str, Any]) -> tuple[list[str], Any]:
    async with Client(plugin.server()) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        return names, await client.call_tool("get_facts", arguments)


async def test_get_facts_with_a_relation_provider(tmp_path: Path) -> None:
    plugin, provider = Mcp(), RelationProvider()
    async with Host(_config(tmp_path, "user-relation"), [plugin, provider]):
        names, result = await _call(plugin, {"session_id": "s1", "query": "where", "limit": 3})
    assert "get_facts" in names
    assert not result.is_error
    assert result.structured_content["facts"] == [
        {"attribute": "city", "value": "Berlin", "sources": ["m1"]}
    ]
    assert provider.service.calls == [("s1", "where", 3)]


async def test_a_bad_limit_is_refused(tmp_path: Path) -> None:
    plugin, provider = Mcp(), RelationProvider()
    async with Host(_config(tmp_path, "user-relation"), [plugin, provider]):
        _, result = await _call(plugin, {"session_id": "s1", "limit": 0})
    assert result.is_error
    assert provider.service.calls == []


async def test_no_get_facts_without_one(tmp_path: Path) -> None:
    plugin = Mcp()
    async with Host(_config(tmp_path, "user-relation"), [plugin]):
        names, result = await _call(plugin, {"session_id": "s1"})
    assert "get_facts" not in names
    assert result.is_error
    assert "no relation provider" in result.content[0].text
