"""``aalis migrate`` between every pair of memory backends, PostgreSQL included.

Each case seeds the source with the same data (sessions with archived spans and kept
positions, markers, tool calls, non-ASCII ids, equal timestamps, metadata in several
namespaces), migrates with the code behind ``aalis migrate`` (``migrate_between``, which
verifies the copy itself), and compares everything the target then holds with the source.
The in-memory store is a source only: it lives in one process, so nothing could read a
migration into it afterwards. The last test runs the command itself, SQLite -> PostgreSQL
-> SQLite, through click and real hosts.

Servers: the test support's session fixtures ``mongodb_uri`` (nx-27017 or
``$AALIS_TEST_MONGODB_URI``) and ``postgres_uri`` (the run's one embedded server or
``$AALIS_TEST_POSTGRES_URI``), from ``aalis_test_support.fixtures``.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import click
import pytest
from aalis_api_memory import Put, memory
from aalis_memory_tools import migrate_between
from aalis_memory_tools._cli_transfer import register
from aalis_schema_message import Message
from click.testing import CliRunner

from aalis_core import Host

SOURCES = ("memory-inmemory", "memory-sqlite", "memory-mongodb", "memory-postgres")
TARGETS = ("memory-sqlite", "memory-mongodb", "memory-postgres")
PAIRS = [(s, t) for s in SOURCES for t in TARGETS if s != t]


@contextlib.asynccontextmanager
async def open_store(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Any]:
    """A fresh, empty store of backend ``name``; its server-side data is dropped at the end."""
    tag = uuid.uuid4().hex[:12]
    if name == "memory-inmemory":
        from aalis_plugin_memory_inmemory import InMemoryMemory

        yield InMemoryMemory()
    elif name == "memory-sqlite":
        from aalis_plugin_memory_sqlite import SqliteMemory

        async with SqliteMemory(tmp_path / f"{tag}.db") as store:
            yield store
    elif name == "memory-mongodb":
        from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory
        from aalis_test_support.mongodb import drop_database

        uri = request.getfixturevalue("mongodb_uri")
        store = await MongoMemory.connect(MongoConfig(uri=uri, database=f"mig_{tag}"))
        try:
            yield store
        finally:
            await store.close()
            await asyncio.to_thread(drop_database, uri, f"mig_{tag}")
    else:
        from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
        from aalis_test_support.postgres import drop_schema

        uri = request.getfixturevalue("postgres_uri")
        store = await PostgresMemory.connect(PostgresConfig(uri=uri, schema=f"mig_{tag}"))
        try:
            yield store
        finally:
            await store.close()
            await asyncio.to_thread(drop_schema, uri, f"mig_{tag}")


def msg(text: str, ts: int, **fields: Any) -> Message:
    return Message(role=fields.pop("role", "user"), content=text, timestamp=ts, **fields)


async def seed(store: Any) -> None:
    for i in range(6):
        await store.save_message(
            "alpha", msg(f"alpha {i}", 1_000 + i, metadata={"platform": "cli"})
        )
    await store.archive_span("alpha", 3)
    await store.save_message(
        "beta",
        msg("", 2_000, role="assistant", tool_calls=[{"id": "c1", "name": "f", "arguments": "{}"}]),
    )
    await store.save_message("beta", msg("result", 2_000, role="tool", tool_call_id="c1"))
    await store.save_message("beta", msg("—", 2_001, role="notice", kind="event-marker"))
    await store.save_message("gamma/日本", msg("こんにちは", 3_000))
    for i in range(60):  # equal timestamps: only the insertion order tells them apart
        await store.save_message("long", msg(f"line {i}", 10_000 + i // 3))
    await store.archive_span("long", 30, keep=[5, 6])
    await store.commit_metadata(
        [
            Put("summary", "alpha", {"text": "alpha so far", "covered": [1000, 1002]}),
            Put("notes", "gamma/日本", {"notes": ["first"]}),
            Put("prefs", "global", {"theme": None, "n": 1.5, "ok": True}),
            *[Put("bulk", f"k{i:02d}", {"i": i}) for i in range(20)],
        ]
    )


async def snapshot(store: Any) -> dict[str, Any]:
    sessions = {
        info.session_id: (
            [(r.message, r.archived) for r in await store.export_session(info.session_id)],
            info.active,
            info.archived,
        )
        for info in await store.list_sessions()
    }
    metadata = {
        (ns, e.key): e.data
        for ns in await store.list_namespaces()
        for e in await store.list_metadata(ns)
    }
    history = {sid: await store.get_history(sid, 10) for sid in sessions}
    return {"sessions": sessions, "metadata": metadata, "history": history}


@pytest.mark.parametrize(("source_name", "target_name"), PAIRS)
async def test_migrate_copies_everything(
    source_name: str, target_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with (
        open_store(source_name, tmp_path, request) as source,
        open_store(target_name, tmp_path, request) as target,
    ):
        await seed(source)
        original = await snapshot(source)
        assert len(original["sessions"]) == 4
        assert sum(a for _m, _act, a in original["sessions"].values()) == 3 + 28
        report = await migrate_between(source, source_name, target, target_name)
        assert report is not None
        copied = await snapshot(target)
        assert copied == original
        again = await migrate_between(source, source_name, target, target_name)
        assert again is not None
        assert await snapshot(target) == original  # a rerun writes nothing twice


def _config(path: Path, sqlite: str, postgres: dict[str, str]) -> Path:
    lines = [
        "[host]",
        f'data_dir = "{path.parent.as_posix()}/data"',
        'log_level = "warning"',
        "",
        "[plugins.memory-sqlite]",
        f'path = "{sqlite}"',
        "",
        "[plugins.memory-postgres]",
        *[f'{key} = "{value}"' for key, value in postgres.items()],
        "",
        "[capabilities.memory]",
        'provider = "memory-sqlite"',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_command_migrates_sqlite_to_postgres_and_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_uri: str
) -> None:
    from aalis_test_support.postgres import drop_schema

    @click.group()
    def aalis() -> None:
        pass

    register(aalis)
    schema = f"mig_{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-postgres")
    config = _config(tmp_path / "aalis.toml", "first.db", {"uri": postgres_uri, "schema": schema})
    monkeypatch.setenv("AALIS_CONFIG", str(config))

    async def with_memory(path: Path, fn: Any, provider: str | None = None) -> Any:
        async with Host.from_config(path) as host:
            handle = host.capability(memory, provider=provider)
            assert handle.present, host.plugins()
            return await fn(handle.use)

    try:
        asyncio.run(with_memory(config, seed))
        original = asyncio.run(with_memory(config, snapshot))
        result = CliRunner().invoke(aalis, ["migrate", "--to", "memory-postgres", "--no-progress"])
        assert result.exit_code == 0, result.output
        assert "Migrated memory-sqlite -> memory-postgres: 4 sessions" in result.stdout
        assert "verified" in result.stdout
        assert asyncio.run(with_memory(config, snapshot, "memory-postgres")) == original
        (tmp_path / "back").mkdir()
        back = _config(
            tmp_path / "back" / "aalis.toml", "back.db", {"uri": postgres_uri, "schema": schema}
        )
        monkeypatch.setenv("AALIS_CONFIG", str(back))
        result = CliRunner().invoke(
            aalis,
            ["migrate", "--from", "memory-postgres", "--to", "memory-sqlite", "--no-progress"],
        )
        assert result.exit_code == 0, result.output
        assert asyncio.run(with_memory(back, snapshot)) == original
    finally:
        drop_schema(postgres_uri, schema)
