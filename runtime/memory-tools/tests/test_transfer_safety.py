"""Import, export and migrate never write part of a bad file or silently leave data out.

- ``aalis import`` checks every line with the backends' own rules before writing anything,
  names the file and line, compares each session in the store's order (so a re-import of a
  file that is not in timestamp order is recognised), and streams the file;
- ``export --all`` and ``migrate`` cover every store that holds some consumer's memory, or
  refuse naming it; a volatile target is refused; an oversize message is named.

Real backends only: SQLite in a temporary directory, MongoDB through the pinned nx-27017
wire-protocol server (or ``$AALIS_TEST_MONGODB_URI``).
"""

from __future__ import annotations

import asyncio
import json
import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from aalis_api_memory import StoredMessage, memory
from aalis_memory_tools import FORMAT, import_into, iter_sessions, scan_export
from aalis_memory_tools._cli_transfer import register
from aalis_schema_message import Message
from click.testing import CliRunner

from aalis_core import Host, Plugin, hookimpl
from aalis_core.testing import running_host

pytest.importorskip("aalis_plugin_memory_sqlite", reason="memory-sqlite is not installed")


@pytest.fixture
def aalis() -> click.Group:
    @click.group()
    def group() -> None:
        pass

    register(group)
    return group


def write_config(path: Path, extra: str = "") -> Path:
    path.write_text(
        "[host]\n"
        f'data_dir = "{path.parent.as_posix()}/data"\n'
        'log_level = "warning"\n\n'
        "[plugins.memory-sqlite]\n"
        'path = "memory.db"\n' + extra,
        encoding="utf-8",
    )
    return path


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-inmemory")
    path = write_config(tmp_path / "aalis.toml")
    monkeypatch.setenv("AALIS_CONFIG", str(path))
    return path


def invoke(group: click.Group, *args: str, ok: bool = True) -> Any:
    result = CliRunner().invoke(group, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output + result.stderr
    return result


async def _sessions(config: Path, provider: str | None = None) -> dict[str, list[Any]]:
    async with Host.from_config(config) as host:
        store = host.capability(memory, provider=provider).use
        return {
            info.session_id: [(r.message, r.archived) for r in await store.export_session(sid)]
            for info in await store.list_sessions()
            for sid in [info.session_id]
        }


def stored(config: Path, provider: str | None = None) -> dict[str, list[Any]]:
    return asyncio.run(_sessions(config, provider))


def line(session_id: str, ts: Any, content: str = "x", archived: bool = False) -> str:
    message = {"role": "user", "content": content, "timestamp": ts}
    return json.dumps({"session_id": session_id, "archived": archived, "message": message})


def export_file(path: Path, lines: list[str]) -> Path:
    head = json.dumps({"format": FORMAT, "version": 1})
    path.write_text("\n".join([head, *lines]) + "\n", encoding="utf-8")
    return path


def three_sessions(bad: str) -> list[str]:
    """Two good sessions, then a third whose second line is ``bad`` (file line 7)."""
    return [
        line("one", 1),
        line("one", 2),
        line("two", 3),
        line("two", 4),
        line("three", 5),
        bad,
        line("three", 7),
    ]


BAD_LINES = {
    "timestamp-over-int64": (line("three", 2**63), "64 bits"),
    "timestamp-under-int64": (line("three", -(2**63) - 1), "64 bits"),
    "lone-surrogate-in-content": (
        '{"session_id":"three","archived":false,'
        '"message":{"role":"user","content":"a\\ud800b","timestamp":6}}',
        "surrogate",
    ),
    "lone-surrogate-in-session-id": (
        '{"session_id":"thr\\udc00ee","archived":false,'
        '"message":{"role":"user","content":"x","timestamp":6}}',
        "session_id",
    ),
    "lone-surrogate-in-metadata": (
        '{"session_id":"three","archived":false,'
        '"message":{"role":"user","content":"x","timestamp":6,"metadata":{"k":"\\ud800"}}}',
        "surrogate",
    ),
    "timestamp-not-an-int": (line("three", "6"), "timestamp"),
}


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bad_line_in_the_third_session_writes_nothing_and_names_file_and_line(
    aalis: click.Group, config: Path, tmp_path: Path, case: str
) -> None:
    bad, problem = BAD_LINES[case]
    path = export_file(tmp_path / "big.jsonl", three_sessions(bad))
    result = invoke(aalis, "import", str(path), ok=False)
    assert result.exit_code == 1
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1, result.stderr
    assert f"{path} line 7:" in errors[0]
    assert problem in errors[0]
    assert stored(config) == {}


def test_an_out_of_order_file_imported_twice_writes_nothing_the_second_time(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    lines = [
        line("s", 30, "c"),
        line("s", 10, "a", archived=True),
        line("s", 20, "b"),
        line("s", 20, "b2"),  # a tie keeps file order
        line("t", 5, "only"),
    ]
    path = export_file(tmp_path / "shuffled.jsonl", lines)
    first = invoke(aalis, "import", str(path))
    assert "Imported 5 messages into 2 sessions" in first.stdout
    after_first = stored(config)
    assert [m.content for m, _ in after_first["s"]] == ["a", "b", "b2", "c"]
    second = invoke(aalis, "import", str(path))
    assert "Imported 0 messages into 0 sessions" in second.stdout
    assert "(2 already present)" in second.stdout
    assert stored(config) == after_first


def test_a_session_with_an_empty_id_round_trips(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    # The backends accept "" as a session id, so import does too: an export of any store
    # must import back (docs/host/export-import.md).
    path = export_file(tmp_path / "empty.jsonl", [line("", 1, "nameless")])
    invoke(aalis, "import", str(path))
    assert [m.content for m, _ in stored(config)[""]] == ["nameless"]


def test_sessions_are_streamed_one_at_a_time() -> None:
    read: list[int] = []

    def lines() -> Iterator[str]:
        yield json.dumps({"format": FORMAT, "version": 1})
        for number in range(30):
            read.append(number)
            yield line(f"s{number // 10}", number)

    summary = scan_export(list(lines()))
    assert summary.session_counts == {"s0": 10, "s1": 10, "s2": 10}
    read.clear()
    sessions = iter_sessions(lines(), summary.session_counts)
    sid, records = next(sessions)
    assert sid == "s0"
    assert len(records) == 10
    assert max(read) == 9  # the first session came out before the rest of the file was read


class SavedListener(Plugin):
    name = "saved-listener"

    def __init__(self) -> None:
        self.events: list[tuple[str, list[Message]]] = []

    @hookimpl
    def memory_messages_saved(self, session_id: str, messages: list[Message]) -> None:
        self.events.append((session_id, list(messages)))


async def test_import_emits_memory_messages_saved_once_per_session_written(
    tmp_path: Path,
) -> None:
    inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")
    listener = SavedListener()
    lines = [
        line("a", 2, "second"),
        line("a", 1, "first"),
        json.dumps(
            {
                "session_id": "a",
                "archived": False,
                "message": {"role": "notice", "kind": "event-marker", "timestamp": 3},
            }
        ),
        line("b", 5, "only"),
    ]
    path = export_file(tmp_path / "e.jsonl", lines)
    async with running_host([inmemory.MemoryInmemory(), listener], data_dir=tmp_path) as host:
        handle = host.capability(memory)
        summary = scan_export(path.read_text(encoding="utf-8").splitlines(), str(path))

        def open_stream() -> Any:
            return path.open(encoding="utf-8")

        await import_into(host, handle.use, handle.provider, open_stream, summary, False)
        assert [(sid, [m.content for m in ms]) for sid, ms in listener.events] == [
            ("a", ["first", "second"]),  # as stored: in order, the marker left out
            ("b", ["only"]),
        ]
        assert all(m.timestamp is not None for _, ms in listener.events for m in ms)
        listener.events.clear()
        await import_into(host, handle.use, handle.provider, open_stream, summary, False)
        assert listener.events == []  # nothing written, nothing announced
        assert [r.message.content for r in await handle.use.export_session("a")] == [
            "first",
            "second",
            None,
        ]
        assert isinstance((await handle.use.export_session("b"))[0], StoredMessage)


def test_import_and_migrate_refuse_a_volatile_target(
    aalis: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-inmemory")
    config = write_config(tmp_path / "aalis.toml")
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    result = invoke(aalis, "migrate", "--to", "memory-inmemory", ok=False)
    assert result.exit_code == 1
    assert "memory-inmemory is volatile" in result.stderr
    pinned = write_config(
        tmp_path / "pinned.toml", '\n[capabilities.memory]\nprovider = "memory-inmemory"\n'
    )
    monkeypatch.setenv("AALIS_CONFIG", str(pinned))
    path = export_file(tmp_path / "x.jsonl", [line("s", 1)])
    result = invoke(aalis, "import", str(path), ok=False)
    assert result.exit_code == 1
    assert "memory-inmemory is volatile" in result.stderr


# --------------------------------------------------------------------------------------
# a consumer pinned to another store; oversize messages (MongoDB)
# --------------------------------------------------------------------------------------


def mongo_config(path: Path, uri: str, extra: str = "") -> Path:
    return write_config(
        path,
        "\n[plugins.memory-mongodb]\n"
        f'uri = "{uri}"\n'
        f'database = "safety_{uuid.uuid4().hex[:12]}"\n\n'
        '[capabilities.memory]\nprovider = "memory-sqlite"\n' + extra,
    )


async def _save(config: Path, provider: str, session_id: str, *messages: Message) -> None:
    async with Host.from_config(config) as host:
        store = host.capability(memory, provider=provider).use
        for message in messages:
            await store.save_message(session_id, message)


def test_export_all_refuses_to_leave_out_a_pinned_consumers_store(
    aalis: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mongodb_uri: str
) -> None:
    pytest.importorskip("aalis_plugin_notes", reason="the notes example is not installed")
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-mongodb,notes")
    config = mongo_config(
        tmp_path / "aalis.toml", mongodb_uri, '\n[consumers.notes]\nmemory = "memory-mongodb"\n'
    )
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    asyncio.run(_save(config, "memory-sqlite", "chat", Message(role="user", content="hi")))
    asyncio.run(_save(config, "memory-mongodb", "n", Message(role="user", content="note")))

    out = tmp_path / "all.jsonl"
    refused = invoke(aalis, "export", "--all", "-o", str(out), ok=False)
    assert refused.exit_code == 1
    error = refused.stderr.strip()
    assert "memory-mongodb (memory of 'notes')" in error
    assert "--from memory-mongodb" in error
    assert not out.exists()

    invoke(aalis, "export", "--all", "--from", "memory-sqlite", "-o", str(out))
    notes = tmp_path / "notes.jsonl"
    invoke(aalis, "export", "--all", "--from", "memory-mongodb", "-o", str(notes))
    assert '"note"' in notes.read_text(encoding="utf-8")
    assert '"hi"' in out.read_text(encoding="utf-8")

    # migrating the CLI's store into the one notes uses leaves nothing out: allowed
    result = invoke(aalis, "migrate", "--to", "memory-mongodb", "--no-progress")
    assert "Migrated memory-sqlite -> memory-mongodb: 1 session" in result.stdout


def test_an_oversize_message_is_named_and_skipped_only_when_asked(
    aalis: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mongodb_uri: str
) -> None:
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-mongodb")
    monkeypatch.chdir(tmp_path)  # the default oversize report lands in the working directory
    config = mongo_config(tmp_path / "aalis.toml", mongodb_uri)
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    huge = Message(role="tool", content="z" * (17 * 1024 * 1024), timestamp=2_000)
    asyncio.run(
        _save(
            config,
            "memory-sqlite",
            "big",
            Message(role="user", content="before", timestamp=1_000),
            huge,
            Message(role="user", content="after", timestamp=3_000),
        )
    )
    asyncio.run(_save(config, "memory-sqlite", "small", Message(role="user", content="ok")))

    refused = invoke(aalis, "migrate", "--to", "memory-mongodb", "--no-progress", ok=False)
    assert refused.exit_code == 1
    error = refused.stderr.strip()
    assert "session 'big' message at timestamp 2000" in error
    assert "--skip-oversize" in error
    assert stored(config, "memory-mongodb") == {}

    report = tmp_path / "skipped.jsonl"
    done = invoke(
        aalis,
        "migrate",
        "--to",
        "memory-mongodb",
        "--no-progress",
        "--skip-oversize",
        "--oversize-report",
        str(report),
    )
    assert "1 oversize message skipped, written to" in done.stdout
    on_mongo = stored(config, "memory-mongodb")
    assert [m.content for m, _ in on_mongo["big"]] == ["before", "after"]
    assert [m.content for m, _ in on_mongo["small"]] == ["ok"]
    kept = report.read_text(encoding="utf-8").splitlines()
    assert len(kept) == 2  # header + the skipped message, importable elsewhere
    assert json.loads(kept[1])["message"]["timestamp"] == 2_000
    rerun = invoke(aalis, "migrate", "--to", "memory-mongodb", "--no-progress", "--skip-oversize")
    assert "0 written, 2 already there" in rerun.stdout
    assert (tmp_path / "aalis-migrate-oversize.jsonl").is_file()


# --------------------------------------------------------------------------------------
# aalis backup
# --------------------------------------------------------------------------------------


def test_backup_is_a_consistent_self_contained_copy(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    import sqlite3

    from aalis_memory_tools._cli_backup import backup_command

    aalis.add_command(backup_command)
    messages = [Message(role="user", content=f"m{i}", timestamp=i) for i in range(50)]
    asyncio.run(_save(config, "memory-sqlite", "s", *messages))
    live = config.parent / "data" / "memory.db"
    # a committed write still only in the live file's -wal: a plain copy of aalis.db
    # would miss it, the backup must not
    holder = sqlite3.connect(live, isolation_level=None)
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute(
        "INSERT INTO metadata (namespace, key, data, updated_at) VALUES ('ns', 'k', '{}', 0)"
    )
    assert Path(f"{live}-wal").stat().st_size > 0

    out = tmp_path / "backups" / "copy.db"
    out.parent.mkdir()
    result = invoke(aalis, "backup", str(out))
    holder.close()
    assert result.stdout.startswith(f"Backed up memory-sqlite to {out} (50 messages")
    assert sorted(p.name for p in out.parent.iterdir()) == ["copy.db"]  # no -wal, no temp
    copy = sqlite3.connect(out)
    assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert copy.execute("SELECT count(*) FROM messages").fetchone()[0] == 50
    assert copy.execute("SELECT key FROM metadata").fetchall() == [("k",)]
    copy.close()

    # the copy opens as a working store, with everything
    from aalis_plugin_memory_sqlite import SqliteMemory

    async def read_copy() -> list[str | None]:
        async with SqliteMemory(out) as store:
            return [m.content for m in await store.get_history("s", math.inf)]

    assert asyncio.run(read_copy()) == [f"m{i}" for i in range(50)]


def test_backup_refuses_a_volatile_store_and_names_missing_support(
    aalis: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aalis_memory_tools._cli_backup import backup_command

    aalis.add_command(backup_command)
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-inmemory")
    config = tmp_path / "aalis.toml"
    config.write_text('[host]\ndata_dir = "data"\n', encoding="utf-8")
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    result = invoke(aalis, "backup", str(tmp_path / "x.db"), ok=False)
    assert result.exit_code == 1
    assert "memory-inmemory is volatile" in result.stderr
    assert not (tmp_path / "x.db").exists()
