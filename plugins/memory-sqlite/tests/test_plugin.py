"""The plugin in a real host: default provider, config, clear type, lifecycle."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import run_clear
from aalis_api_memory import ClearType, memory
from aalis_plugin_memory_sqlite import SqliteConfig, SqliteMemory, StoreClosed
from aalis_plugin_memory_sqlite._plugin import PRIORITY, MemorySqlite
from aalis_schema_message import Message

from aalis_core._config import ConfigError
from aalis_core._context import PluginContext
from aalis_core._plugin import Plugin
from aalis_core.testing import make_test_host, running_host


class OtherMemory(Plugin):
    """A second, lower-priority ``memory`` provider (as memory-mongodb or inmemory would be)."""

    name = "other-memory"
    provides = (memory,)

    def __init__(self, priority: int) -> None:
        self.priority = priority

    async def start(self, ctx: PluginContext) -> None:
        ctx.provide(memory, SqliteMemory(ctx.data_dir / "never-opened.db"), priority=self.priority)


def msg(content: str, ts: int) -> Message:
    return Message(role="user", content=content, timestamp=1_700_000_000_000 + ts)


async def test_default_provider_with_no_config(tmp_path: Path) -> None:
    data = tmp_path / "data"
    plugin = MemorySqlite()
    async with running_host([plugin, OtherMemory(5)], data_dir=data) as host:
        info = {i.name: i for i in host.plugins()}
        assert info["memory-sqlite"].state == "active", info["memory-sqlite"].error
        handle = host.capability(memory)
        assert handle.provider == "memory-sqlite"
        await handle.use.save_message("s", msg("hello", 1))
        assert [m.content for m in await handle.use.get_history("s")] == ["hello"]
        contributions = host.collect_contributions("memory_clear_types")
        assert ("memory-sqlite", ClearType("context", contributions[0][1].label)) in contributions
        assert str(contributions[0][1].label) == "Conversation history"
    assert (data / "aalis.db").is_file()
    assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
    assert PRIORITY == 10


async def test_a_higher_priority_provider_wins(tmp_path: Path) -> None:
    async with running_host([MemorySqlite(), OtherMemory(11)], data_dir=tmp_path) as host:
        assert host.capability(memory).provider == "other-memory"


async def test_config_table_is_applied(tmp_path: Path) -> None:
    plugin = MemorySqlite()
    config = {
        "plugins": {
            "memory-sqlite": {
                "path": "nested/chat.db",
                "synchronous": "FULL",
                "busy_timeout_ms": 250,
                "range_query_limit": 7,
                "cross_session_max_limit": 9,
            }
        }
    }
    async with running_host([plugin], config, data_dir=tmp_path / "d") as host:
        store = plugin.store
        assert store is not None
        assert store.path == tmp_path / "d" / "nested" / "chat.db"
        assert (store.range_query_limit, store.cross_session_max_limit) == (7, 9)
        pragmas = await store.run_on_connection(
            lambda conn: (
                conn.execute("PRAGMA synchronous").fetchone()[0],
                conn.execute("PRAGMA busy_timeout").fetchone()[0],
            )
        )
        assert pragmas == (2, 250)
        assert host.capability(memory).provider == "memory-sqlite"


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"synchronous": "OFF"}, "synchronous"),
        ({"busy_timeout_ms": -1}, "busy_timeout_ms"),
        ({"busy_timeout_ms": True}, "busy_timeout_ms"),
        ({"range_query_limit": 0}, "range_query_limit"),
        ({"path": ""}, "path"),
        ({"path": 5}, "path"),
        ({"unknown_key": 1}, "unknown_key"),
    ],
)
async def test_bad_config_fails_the_plugin_and_opens_no_database(
    tmp_path: Path, table: dict[str, Any], key: str
) -> None:
    from aalis_core.testing import plugin_config_error

    host = make_test_host(
        [MemorySqlite()], {"plugins": {"memory-sqlite": table}}, data_dir=tmp_path
    )
    caught = plugin_config_error(host, "memory-sqlite")
    assert isinstance(caught, ConfigError)
    assert "memory-sqlite" in str(caught)
    assert key in str(caught)
    async with host:
        assert not host.capability(memory).present
    assert not (tmp_path / "aalis.db").exists()


def test_config_defaults() -> None:
    config = SqliteConfig()
    assert (config.path, config.synchronous, config.busy_timeout_ms) == ("aalis.db", "NORMAL", 5000)
    assert (config.range_query_limit, config.cross_session_max_limit) == (500, 1000)
    assert SqliteConfig(synchronous="full").synchronous == "FULL"


async def test_stop_closes_the_database_and_data_persists(tmp_path: Path) -> None:
    plugin = MemorySqlite()
    async with running_host([plugin], data_dir=tmp_path) as host:
        await host.capability(memory).use.save_message("s", msg("kept", 1))
        store = plugin.store
    assert plugin.store is None
    assert store is not None
    with pytest.raises(StoreClosed):
        await store.get_history("s")
    again = MemorySqlite()
    async with running_host([again], data_dir=tmp_path) as host:
        assert [m.content for m in await host.capability(memory).use.get_history("s")] == ["kept"]


async def test_run_clear_clears_the_history_through_the_plugin(tmp_path: Path) -> None:
    async with running_host([MemorySqlite()], data_dir=tmp_path) as host:
        use = host.capability(memory).use
        await use.save_message("a", msg("one", 1))
        await use.save_message("b", msg("two", 2))
        await use.save_metadata("ns", "k", {"v": 1})
        rows = await run_clear(host, "session", session_id="a", types=["context"])
        assert [(r.source, r.type, r.success) for r in rows] == [("memory", "context", True)]
        assert await use.get_history("a") == []
        assert [m.content for m in await use.get_history("b")] == ["two"]
        await run_clear(host, "all")
        assert await use.list_sessions() == []
        assert await use.get_metadata("ns", "k") == {"v": 1}


async def test_a_file_that_cannot_be_opened_marks_the_plugin_failed(tmp_path: Path) -> None:
    (tmp_path / "aalis.db").write_bytes(b"this is not a database" * 100)
    async with running_host([MemorySqlite()], data_dir=tmp_path) as host:
        info = {i.name: i for i in host.plugins()}["memory-sqlite"]
        assert info.state == "error"
        assert "database" in (info.error or "")
        assert not host.capability(memory).present
