"""``aalis mcp`` over a real stdio subprocess, driven by the official SDK's own client:
initialize, list the tools, call each one, and a disabled write tool answers with an error."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import SyncHost
from aalis_schema_message import Message
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.timeout(120)

AALIS = Path(sys.executable).with_name("aalis")


def _params(workdir: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
    env["AALIS_LOG_LEVEL"] = "warning"
    return StdioServerParameters(command=str(AALIS), args=["mcp"], env=env, cwd=workdir)


def _write_config(workdir: Path, **mcp: bool) -> None:
    lines = [
        "[plugins]",
        'disabled = ["memory-mongodb", "llm-openai", "memory-vector", "user-relation"]',
        "[plugins.mcp]",
        *(f"{key} = {'true' if value else 'false'}" for key, value in mcp.items()),
    ]
    (workdir / "aalis.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _seed(workdir: Path) -> None:
    """Two sessions and a metadata entry, written through the host as any app would."""
    config = {
        "host": {"data_dir": str(workdir / ".aalis")},
        "plugins": {"disabled": ["memory-mongodb", "llm-openai", "memory-vector", "user-relation"]},
    }
    with SyncHost(config) as aalis:
        aalis.memory.save_message("s1", Message(role="user", content="hello", timestamp=1000))
        aalis.memory.save_message(
            "s1", Message(role="assistant", content="hi there", timestamp=1001)
        )
        aalis.memory.save_message("s2", Message(role="user", content="other", timestamp=2000))
        aalis.memory.save_metadata("prefs", "alice", {"lang": "fr"})


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_read_only_server(tmp_path: Path) -> None:
    _write_config(tmp_path)
    _seed(tmp_path)
    async with Client(_params(tmp_path)) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert names == ["get_history", "get_metadata", "list_metadata", "list_sessions"]

        sessions = _data(await client.call_tool("list_sessions", {}))["sessions"]
        assert [s["session_id"] for s in sessions] == ["s2", "s1"]
        assert sessions[1]["active"] == 2

        history = _data(await client.call_tool("get_history", {"session_id": "s1"}))
        assert [(m["role"], m["content"]) for m in history["messages"]] == [
            ("user", "hello"),
            ("assistant", "hi there"),
        ]
        assert history["summary"] is None
        last = _data(await client.call_tool("get_history", {"session_id": "s1", "limit": 1}))
        assert [m["content"] for m in last["messages"]] == ["hi there"]

        entry = _data(
            await client.call_tool("get_metadata", {"namespace": "prefs", "key": "alice"})
        )
        assert entry["data"] == {"lang": "fr"}
        missing = _data(
            await client.call_tool("get_metadata", {"namespace": "prefs", "key": "bob"})
        )
        assert missing["data"] is None
        listed = _data(await client.call_tool("list_metadata", {"namespace": "prefs"}))
        assert [e["key"] for e in listed["entries"]] == ["alice"]

        # Write and clear tools are off: an error that says how to turn them on, and the
        # store is unchanged.
        refused = await client.call_tool(
            "save_message", {"session_id": "s1", "role": "user", "content": "sneaky"}
        )
        assert refused.is_error
        assert "allow_write = true" in refused.content[0].text
        cleared = await client.call_tool("clear_session", {"session_id": "s1"})
        assert cleared.is_error
        assert "allow_clear = true" in cleared.content[0].text
        recall = await client.call_tool("search_recall", {"session_id": "s1", "query": "hi"})
        assert recall.is_error
        assert "recall" in recall.content[0].text
        bad = await client.call_tool("get_history", {"session_id": "s1", "limit": -1})
        assert bad.is_error
        again = _data(await client.call_tool("get_history", {"session_id": "s1"}))
        assert len(again["messages"]) == 2


async def test_write_and_clear_when_enabled(tmp_path: Path) -> None:
    _write_config(tmp_path, allow_write=True, allow_clear=True)
    async with Client(_params(tmp_path)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"save_message", "save_metadata", "delete_metadata", "clear_session"} <= names

        saved = _data(
            await client.call_tool(
                "save_message", {"session_id": "w", "role": "user", "content": "remember this"}
            )
        )
        assert saved["message"]["timestamp"] > 0
        assert saved["message"]["metadata"] == {"platform": "mcp"}
        _data(
            await client.call_tool(
                "save_metadata", {"namespace": "n", "key": "k", "data": {"v": 1}}
            )
        )
        entry = _data(await client.call_tool("get_metadata", {"namespace": "n", "key": "k"}))
        assert entry["data"] == {"v": 1}
        _data(await client.call_tool("delete_metadata", {"namespace": "n", "key": "k"}))
        gone = _data(await client.call_tool("get_metadata", {"namespace": "n", "key": "k"}))
        assert gone["data"] is None

        rows = _data(await client.call_tool("clear_session", {"session_id": "w"}))["results"]
        assert any(r["type"] == "context" and r["success"] for r in rows)
        after = _data(await client.call_tool("get_history", {"session_id": "w"}))
        assert after["messages"] == []
        unknown = await client.call_tool("clear_session", {"session_id": "w", "types": ["nope"]})
        assert unknown.is_error
    # The writes reached the durable store: a host opened afterwards sees the session gone
    # and the metadata deleted.
    config = {
        "host": {"data_dir": str(tmp_path / ".aalis")},
        "plugins": {"disabled": ["memory-mongodb", "llm-openai", "memory-vector", "user-relation"]},
    }
    with SyncHost(config) as aalis:
        assert aalis.history("w") == []
        assert aalis.memory.get_metadata("n", "k") is None
