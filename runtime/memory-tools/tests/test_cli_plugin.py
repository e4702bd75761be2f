"""The memory-cli commands (history, sessions, clear, metadata) through click's runner.

Each command opens its own host, as ``aalis`` does, from an ``aalis.toml`` in a temporary
directory (``AALIS_CONFIG``) on the SQLite backend, so what one command writes the next one
reads. ``AALIS_LOAD_PLUGINS`` keeps other installed plugins out of these hosts.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from aalis_api_memory import memory
from aalis_memory_tools._cli_plugin import COMMANDS, MemoryCli, register
from aalis_schema_message import Message, ToolCall
from click.testing import CliRunner

from aalis_core import Host

pytest.importorskip("aalis_plugin_memory_sqlite", reason="the CLI tests run on memory-sqlite")

T0 = 1_700_000_000_000


@pytest.fixture
def aalis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """``aalis(*args)`` runs a memory command against the temporary configuration."""
    config = tmp_path / "aalis.toml"
    config.write_text(
        '[host]\ndata_dir = "data"\n\n[capabilities.memory]\nprovider = "memory-sqlite"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-cli")
    monkeypatch.chdir(tmp_path)

    @click.group()
    def group() -> None:
        pass

    register(group)

    def run(*args: str, expect: int | None = 0) -> Any:
        result = CliRunner().invoke(group, list(args), catch_exceptions=False)
        if expect is not None:
            assert result.exit_code == expect, (result.output, result.stderr)
        return result

    return run


def seed(config: Path, actions: Callable[[Any], Any]) -> None:
    async def main() -> None:
        async with Host.from_config(config) as host:
            await actions(host.capability(memory).use)

    asyncio.run(main())


@pytest.fixture
def seeded(aalis: Callable[..., Any], tmp_path: Path) -> Callable[..., Any]:
    async def actions(mem: Any) -> None:
        await mem.save_message(
            "s1", Message(role="user", content="hello\nsecond line", timestamp=T0)
        )
        await mem.save_message(
            "s1",
            Message(
                role="assistant",
                tool_calls=(ToolCall(id="c1", name="lookup", arguments='{"q": 1}'),),
                timestamp=T0 + 1,
            ),
        )
        await mem.save_message(
            "s1", Message(role="tool", content="42", tool_call_id="c1", timestamp=T0 + 2)
        )
        await mem.save_message(
            "s1", Message(role="notice", kind="event-marker", content="divider", timestamp=T0 + 3)
        )
        await mem.save_message(
            "s1", Message(role="assistant", content="it is 42", timestamp=T0 + 4)
        )
        await mem.archive_span("s1", 1)
        await mem.save_message(
            "s2", Message(role="user", content="other session", timestamp=T0 + 10)
        )
        await mem.save_metadata("notes", "b", {"text": "second"})
        await mem.save_metadata("notes", "a", {"text": "first", "n": [1, 2]})
        await mem.save_metadata("summary", "s1", {"text": "a summary"})

    seed(tmp_path / "aalis.toml", actions)
    return aalis


# -- history ------------------------------------------------------------------------------


def test_history_prints_active_messages(seeded: Callable[..., Any]) -> None:
    out = seeded("history", "s1").stdout
    lines = out.splitlines()
    assert "hello" not in out  # archived
    assert lines[0].endswith('assistant: -> lookup({"q": 1})')
    assert lines[1].endswith("tool [c1]: 42")
    assert lines[2].endswith("notice/event-marker: divider")
    assert lines[3].endswith("assistant: it is 42")
    assert len(lines) == 4


def test_history_full_shows_archived_and_indents_lines(seeded: Callable[..., Any]) -> None:
    lines = seeded("history", "s1", "--full").stdout.splitlines()
    assert lines[0].endswith("user: hello")
    assert lines[1] == "    second line"
    assert len(lines) == 6


def test_history_json_and_limits(seeded: Callable[..., Any]) -> None:
    data = json.loads(seeded("history", "s1", "--json", "--limit", "1").stdout)
    # The last conversation message, and the marker after the one before it.
    assert [m.get("content") for m in data] == ["divider", "it is 42"]
    # Every message is shown with its id (what `aalis undo` and derived layers name it by).
    assert all(isinstance(m.pop("id"), str) for m in data)
    assert data[1] == {"role": "assistant", "content": "it is 42", "timestamp": T0 + 4}
    full = json.loads(seeded("history", "s1", "--full", "--json", "-n", "all").stdout)
    assert len(full) == 5
    assert full[1]["tool_calls"] == [{"id": "c1", "name": "lookup", "arguments": '{"q": 1}'}]
    assert json.loads(seeded("history", "s1", "--json", "--limit", "0").stdout) == []


def test_history_of_an_unknown_session(seeded: Callable[..., Any]) -> None:
    result = seeded("history", "nobody")
    assert result.stdout == ""
    assert "no messages in session 'nobody'" in result.stderr


@pytest.mark.parametrize("limit", ["-1", "two", "1.5"])
def test_history_refuses_a_bad_limit(seeded: Callable[..., Any], limit: str) -> None:
    result = seeded("history", "s1", "--limit", limit, expect=2)
    assert "--limit" in result.stderr


# -- sessions -----------------------------------------------------------------------------


def test_sessions_table_and_json(seeded: Callable[..., Any]) -> None:
    lines = seeded("sessions").stdout.splitlines()
    assert lines[0].split() == ["SESSION", "ACTIVE", "ARCHIVED", "LAST", "MESSAGE"]
    assert lines[1].split()[:3] == ["s2", "1", "0"]
    assert lines[2].split()[:3] == ["s1", "4", "1"]
    data = json.loads(seeded("sessions", "--json").stdout)
    assert data == [
        {"session_id": "s2", "active": 1, "archived": 0, "last_timestamp": T0 + 10},
        {"session_id": "s1", "active": 4, "archived": 1, "last_timestamp": T0 + 4},
    ]


def test_sessions_when_there_are_none(aalis: Callable[..., Any]) -> None:
    result = aalis("sessions")
    assert result.stdout == ""
    assert "no sessions" in result.stderr


# -- clear --------------------------------------------------------------------------------


def test_clear_one_session_prints_one_line_per_row(seeded: Callable[..., Any]) -> None:
    result = seeded("clear", "--session", "s1")
    assert result.stdout.splitlines() == ["ok     context: conversation history cleared [memory]"]
    assert seeded("history", "s1", "--full", "--json").stdout.strip() == "[]"
    assert len(json.loads(seeded("history", "s2", "--json").stdout)) == 1
    assert json.loads(seeded("metadata", "get", "summary", "s1").stdout) == {"text": "a summary"}


def test_clear_all_with_an_alias(seeded: Callable[..., Any]) -> None:
    result = seeded("clear", "--all", "--yes", "-t", "history")
    assert result.stdout.splitlines() == [
        "ok     context: every conversation history cleared [memory]"
    ]
    assert json.loads(seeded("sessions", "--json").stdout) == []


def test_clear_an_unknown_type_is_one_error_line(seeded: Callable[..., Any]) -> None:
    result = seeded("clear", "--session", "s1", "-t", "bogus", expect=1)
    assert result.stdout == ""
    assert "Error: unknown clear type(s): bogus (known: context)" in result.stderr.splitlines()
    assert len(json.loads(seeded("history", "s1", "--json").stdout)) == 4


@pytest.mark.parametrize("args", [[], ["--all", "--session", "s1"]])
def test_clear_needs_exactly_one_scope(seeded: Callable[..., Any], args: list[str]) -> None:
    result = seeded("clear", *args, expect=2)
    assert "exactly one of --session SESSION or --all" in result.stderr


def test_clear_exits_non_zero_when_a_row_failed(
    seeded: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # memory pinned to a provider that is not loaded: the history cannot be cleared.
    (tmp_path / "aalis.toml").write_text(
        '[host]\ndata_dir = "data"\n\n[capabilities.memory]\nprovider = "memory-inmemory"\n',
        encoding="utf-8",
    )
    # The clear is refused before any plugin clears its part, with the store's reason.
    result = seeded("clear", "--session", "s1", expect=1)
    assert result.stdout == ""
    assert "pinned provider 'memory-inmemory' is not active" in result.stderr


def test_clear_help_lists_the_registered_types(aalis: Callable[..., Any]) -> None:
    out = aalis("clear", "--help").stdout
    assert "Clear types:" in out
    assert "context" in out
    assert "Conversation history" in out
    assert "aliases of context" in out


# -- metadata -----------------------------------------------------------------------------


def test_metadata_list_namespaces_and_entries(seeded: Callable[..., Any]) -> None:
    assert seeded("metadata", "list").stdout.splitlines() == ["notes", "summary"]
    assert json.loads(seeded("metadata", "list", "--json").stdout) == ["notes", "summary"]
    lines = seeded("metadata", "list", "notes").stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["a", "b"]
    assert lines[0].split("\t")[2] == '{"text":"first","n":[1,2]}'
    rows = json.loads(seeded("metadata", "list", "notes", "--json").stdout)
    assert [(r["key"], r["data"]) for r in rows] == [
        ("a", {"text": "first", "n": [1, 2]}),
        ("b", {"text": "second"}),
    ]
    assert all(isinstance(r["updated_at"], int) for r in rows)


def test_metadata_get_and_delete(seeded: Callable[..., Any]) -> None:
    assert json.loads(seeded("metadata", "get", "notes", "a").stdout) == {
        "text": "first",
        "n": [1, 2],
    }
    assert seeded("metadata", "delete", "notes", "a").stdout.strip() == "deleted notes/a"
    assert (
        seeded("metadata", "delete", "notes", "a").stdout.strip()
        == "no entry notes/a; nothing deleted"
    )
    result = seeded("metadata", "get", "notes", "a", expect=1)
    assert "Error: no readable metadata entry notes/a" in result.stderr.splitlines()
    assert [
        line.split("\t")[0] for line in seeded("metadata", "list", "notes").stdout.splitlines()
    ] == ["b"]


def test_metadata_list_of_an_empty_namespace(seeded: Callable[..., Any]) -> None:
    result = seeded("metadata", "list", "nothing")
    assert result.stdout == ""
    assert "no entries in namespace 'nothing'" in result.stderr


# -- the plugin ---------------------------------------------------------------------------


def test_the_plugin_registers_every_memory_command() -> None:
    @click.group()
    def group() -> None:
        pass

    MemoryCli().register_commands(group)
    assert {"history", "sessions", "clear", "metadata"} <= set(group.commands)
    assert {"export", "import", "migrate"} <= set(group.commands)
    assert {c.name for c in COMMANDS} == {"history", "sessions", "clear", "metadata", "undo"}
    assert set(group.commands["metadata"].commands) == {"list", "get", "delete"}  # type: ignore[attr-defined]


def test_the_aalis_cli_finds_the_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aalis_core._cli import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-cli")
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("history", "sessions", "clear", "metadata"):
        assert f"  {name} " in result.stdout
