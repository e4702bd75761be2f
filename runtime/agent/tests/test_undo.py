"""Undo of the last turn: the newest user message and what followed, deleted by timestamp,
with the change events; through the function and through ``aalis undo SESSION``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import pytest
from aalis_agent import UndoError, undo_last_turn
from aalis_api_memory import memory
from aalis_memory_tools._cli_plugin import register
from aalis_schema_message import Message, ToolCall
from click.testing import CliRunner

from aalis_core import Host, Plugin, hookimpl

T0 = 1_700_000_000_000


class Events(Plugin):
    name = "events"

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    @hookimpl
    def memory_messages_deleted(self, session_id: str, timestamps: Sequence[int]) -> None:
        self.seen.append(("deleted", (session_id, list(timestamps))))

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.seen.append(("changed", session_id))


def conversation() -> list[Message]:
    return [
        Message(role="user", content="first", timestamp=T0),
        Message(role="assistant", content="one", timestamp=T0 + 1),
        Message(role="user", content="second", timestamp=T0 + 2),
        Message(
            role="assistant",
            content=None,
            tool_calls=(ToolCall(id="c1", name="look", arguments="{}"),),
            timestamp=T0 + 3,
        ),
        Message(role="tool", content="found", tool_call_id="c1", timestamp=T0 + 4),
        Message(role="assistant", content="two", timestamp=T0 + 5),
    ]


async def test_undo_deletes_the_whole_last_turn_and_tells_everyone(
    make_host: Callable[..., Any],
) -> None:
    events = Events()
    async with make_host(events) as host:
        mem = host.capability(memory).use
        for message in conversation():
            await mem.save_message("s", message)
        await mem.save_message("other", Message(role="user", content="x", timestamp=T0 + 2))
        outcome = await undo_last_turn(mem, "s", host.emit)
        assert [m.content for m in outcome.messages] == ["second", None, "found", "two"]
        assert outcome.deleted == 4
        assert [m.content for m in await mem.get_history("s", math.inf)] == ["first", "one"]
        assert len(await mem.get_history("other", math.inf)) == 1
        assert events.seen == [
            ("deleted", ("s", [T0 + 2, T0 + 3, T0 + 4, T0 + 5])),
            ("changed", "s"),
        ]
        await undo_last_turn(mem, "s", host.emit)
        assert await mem.get_history("s", math.inf) == []
        with pytest.raises(UndoError, match="nothing to undo"):
            await undo_last_turn(mem, "s", host.emit)
        assert len(events.seen) == 4  # nothing emitted for the refused undo


async def test_undo_by_id_takes_only_the_turn_when_an_earlier_message_shares_its_timestamp(
    make_host: Callable[..., Any],
) -> None:
    async with make_host() as host:
        mem = host.capability(memory).use
        await mem.save_message("s", Message(role="assistant", content="old", timestamp=T0))
        await mem.save_message("s", Message(role="user", content="new", timestamp=T0))
        outcome = await undo_last_turn(mem, "s", host.emit)
        assert [m.content for m in outcome.messages] == ["new"]
        assert outcome.deleted == 1
        assert [m.content for m in await mem.get_history("s", math.inf)] == ["old"]


async def test_undo_by_timestamp_refuses_when_an_earlier_message_shares_the_turns_timestamp() -> (
    None
):
    class TimestampsOnly:
        """A store without identity: no ids on its messages, deletes by timestamp only."""

        async def get_history(self, session_id: str, limit: Any = None) -> list[Message]:
            return [
                Message(role="assistant", content="old", timestamp=T0),
                Message(role="user", content="new", timestamp=T0),
            ]

        async def delete_messages_by_timestamps(self, session_id: str, timestamps: Any) -> int:
            raise AssertionError("nothing may be deleted")

    async def emit(event: str, **payload: Any) -> None:
        raise AssertionError("nothing may be emitted")

    with pytest.raises(UndoError, match="shares a timestamp"):
        await undo_last_turn(TimestampsOnly(), "s", emit)


async def test_undo_needs_delete_by_timestamps(make_host: Callable[..., Any]) -> None:
    class NoDelete:
        async def get_history(self, session_id: str, limit: Any = None) -> list[Message]:
            return conversation()

    async def emit(event: str, **payload: Any) -> None:
        raise AssertionError("nothing may be emitted")

    with pytest.raises(UndoError, match="delete_messages_by_timestamps"):
        await undo_last_turn(NoDelete(), "s", emit)


def test_aalis_undo_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("aalis_plugin_memory_sqlite")
    config = tmp_path / "aalis.toml"
    config.write_text(
        '[host]\ndata_dir = "data"\n\n[capabilities.memory]\nprovider = "memory-sqlite"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-cli")
    monkeypatch.chdir(tmp_path)

    async def seed() -> None:
        async with Host.from_config(config) as host:
            mem = host.capability(memory).use
            for message in conversation():
                await mem.save_message("s", message)

    import asyncio

    asyncio.run(seed())

    @click.group()
    def group() -> None:
        pass

    register(group)
    run = CliRunner().invoke(group, ["undo", "s"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    assert "undone: 4 messages deleted from session 's'" in run.stdout
    history = CliRunner().invoke(group, ["history", "s", "--json"], catch_exceptions=False)
    assert [m["content"] for m in __import__("json").loads(history.stdout)] == ["first", "one"]
    CliRunner().invoke(group, ["undo", "s"], catch_exceptions=False)
    empty = CliRunner().invoke(group, ["undo", "s"], catch_exceptions=False)
    assert empty.exit_code == 1
    assert "nothing to undo in session 's'" in empty.stderr
