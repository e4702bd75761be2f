"""``aalis export`` / ``aalis import`` / ``aalis migrate`` on real backends.

The commands run through click's test runner against a real host built from an
``aalis.toml`` in a temporary directory (``AALIS_CONFIG``); what they wrote is read back
through a second host and counted. ``AALIS_LOAD_PLUGINS`` keeps other installed plugins
out of these hosts, so the tests depend only on the backends they name.

MongoDB: ``$AALIS_TEST_MONGODB_URI`` when set, else the pinned nx-27017 wire-protocol
server started on loopback by ``aalis_test_support.mongodb.wire_server`` (the
launcher every MongoDB suite shares).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import click
import pytest
from aalis_api_memory import Delete, Put, StoredMessage, memory
from aalis_memory_tools import (
    FORMAT,
    FORMAT_VERSION,
    TransferError,
    migrate_between,
    parse_export,
    plan_session,
)
from aalis_memory_tools._cli_transfer import register
from aalis_schema_message import Message
from click.testing import CliRunner

from aalis_core import Host

pytest.importorskip("aalis_plugin_memory_sqlite", reason="memory-sqlite is not installed")


@pytest.fixture
def aalis() -> click.Group:
    """A click group holding just the transfer commands (what memory-cli registers)."""

    @click.group()
    def group() -> None:
        pass

    register(group)
    return group


def write_config(
    path: Path, *, sqlite: str = "memory.db", mongo: dict[str, str] | None = None
) -> Path:
    lines = [
        "[host]",
        f'data_dir = "{path.parent.as_posix()}/data"',
        'log_level = "warning"',
        "",
        "[plugins.memory-sqlite]",
        f'path = "{sqlite}"',
        "",
        "[capabilities.memory]",
        'provider = "memory-sqlite"',
    ]
    if mongo is not None:
        lines += ["", "[plugins.memory-mongodb]"]
        lines += [f'{key} = "{value}"' for key, value in mongo.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-inmemory")
    path = write_config(tmp_path / "aalis.toml")
    monkeypatch.setenv("AALIS_CONFIG", str(path))
    return path


def invoke(group: click.Group, *args: str, ok: bool = True, input: str | None = None) -> Any:
    result = CliRunner().invoke(group, list(args), catch_exceptions=False, input=input)
    if ok:
        assert result.exit_code == 0, result.output + result.stderr
    return result


# --------------------------------------------------------------------------------------
# a host on the test's config, for seeding and counting
# --------------------------------------------------------------------------------------


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _with_memory(config: Path, fn: Any, provider: str | None = None) -> Any:
    async with Host.from_config(config) as host:
        handle = host.capability(memory, provider=provider)
        assert handle.present, host.plugins()
        return await fn(handle.use)


def msg(text: str, ts: int, **fields: Any) -> Message:
    return Message(role=fields.pop("role", "user"), content=text, timestamp=ts, **fields)


async def seed(store: Any) -> None:
    """Three sessions with archived spans, markers, tool calls, and three namespaces."""
    for i in range(6):
        await store.save_message(
            "alpha", msg(f"alpha {i}", 1_000 + i, metadata={"platform": "cli"})
        )
    await store.archive_span("alpha", 3)
    await store.save_message(
        "beta",
        msg(
            "",
            2_000,
            role="assistant",
            tool_calls=[{"id": "c1", "name": "lookup", "arguments": '{"q": 1}'}],
        ),
    )
    await store.save_message("beta", msg("result", 2_000, role="tool", tool_call_id="c1"))
    await store.save_message("beta", msg("—", 2_001, role="notice", kind="event-marker"))
    await store.save_message("gamma/日本", msg("こんにちは", 3_000))
    await store.commit_metadata(
        [
            Put("summary", "alpha", {"text": "alpha so far", "covered": [1000, 1002]}),
            Put("notes", "beta", {"notes": ["first", "second"]}),
            Put("notes", "gamma/日本", {"notes": []}),
            Put("prefs", "global", {"theme": None, "n": 1.5, "ok": True}),
        ]
    )


async def snapshot(store: Any) -> dict[str, Any]:
    """Everything a store holds, comparable across backends."""
    sessions = {
        info.session_id: [
            (r.message, r.archived) for r in await store.export_session(info.session_id)
        ]
        for info in await store.list_sessions()
    }
    metadata = {
        (ns, e.key): e.data
        for ns in await store.list_namespaces()
        for e in await store.list_metadata(ns)
    }
    return {"sessions": sessions, "metadata": metadata}


def counts(snap: dict[str, Any]) -> tuple[int, int, int, int]:
    """(sessions, messages, archived messages, metadata entries)."""
    messages = [m for records in snap["sessions"].values() for m in records]
    return (
        len(snap["sessions"]),
        len(messages),
        sum(1 for _, archived in messages if archived),
        len(snap["metadata"]),
    )


# --------------------------------------------------------------------------------------
# export / import on SQLite
# --------------------------------------------------------------------------------------


def test_export_all_writes_header_messages_and_metadata(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    run(_with_memory(config, seed))
    out = tmp_path / "dump.jsonl"
    result = invoke(aalis, "export", "--all", "-o", str(out))
    assert "Exported 10 messages of 3 sessions and 4 metadata entries" in result.stderr

    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    head, rest = lines[0], lines[1:]
    assert head["format"] == FORMAT
    assert head["version"] == FORMAT_VERSION
    assert head["provider"] == "memory-sqlite"
    messages = [line for line in rest if "session_id" in line]
    metadata = [line for line in rest if "namespace" in line]
    assert len(messages) == 10
    assert sum(1 for line in messages if line["archived"]) == 3
    assert [m["message"]["content"] for m in messages if m["session_id"] == "alpha"] == [
        f"alpha {i}" for i in range(6)
    ]
    assert {(m["namespace"], m["key"]) for m in metadata} == {
        ("summary", "alpha"),
        ("notes", "beta"),
        ("notes", "gamma/日本"),
        ("prefs", "global"),
    }


def test_export_one_session_to_stdout(aalis: click.Group, config: Path) -> None:
    run(_with_memory(config, seed))
    result = invoke(aalis, "export", "beta")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["scope"] == "session"
    assert [line["message"]["role"] for line in lines[1:]] == ["assistant", "tool", "notice"]
    assert lines[1]["message"]["tool_calls"][0]["name"] == "lookup"
    assert all("namespace" not in line for line in lines)


def test_export_unknown_session_is_one_line_error(aalis: click.Group, config: Path) -> None:
    run(_with_memory(config, seed))
    result = invoke(aalis, "export", "nope", ok=False)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "session 'nope' has no messages" in result.stderr
    assert result.stdout == ""


def test_export_needs_a_session_or_all(aalis: click.Group, config: Path) -> None:
    assert invoke(aalis, "export", ok=False).exit_code == 2
    assert invoke(aalis, "export", "alpha", "--all", ok=False).exit_code == 2


def test_round_trip_into_a_fresh_store_keeps_everything(
    aalis: click.Group, config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(_with_memory(config, seed))
    before = run(_with_memory(config, snapshot))
    out = tmp_path / "dump.jsonl"
    invoke(aalis, "export", "--all", "-o", str(out))

    (tmp_path / "fresh").mkdir()
    fresh = write_config(tmp_path / "fresh" / "aalis.toml", sqlite="fresh.db")
    monkeypatch.setenv("AALIS_CONFIG", str(fresh))
    result = invoke(aalis, "import", str(out))
    assert "Imported 10 messages into 3 sessions" in result.stdout
    assert "4 metadata entries written" in result.stdout

    after = run(_with_memory(fresh, snapshot))
    assert after == before
    assert counts(after) == (3, 10, 3, 4)


def test_import_reads_stdin(aalis: click.Group, config: Path) -> None:
    run(_with_memory(config, seed))
    dump = invoke(aalis, "export", "beta").stdout
    run(_with_memory(config, lambda store: store.clear_session("beta")))
    result = invoke(aalis, "import", "-", input=dump)
    assert "Imported 3 messages into 1 session" in result.stdout
    history = run(_with_memory(config, lambda store: store.export_session("beta")))
    assert [r.message.role for r in history] == ["assistant", "tool", "notice"]


def test_reimport_is_idempotent(aalis: click.Group, config: Path, tmp_path: Path) -> None:
    run(_with_memory(config, seed))
    out = tmp_path / "dump.jsonl"
    invoke(aalis, "export", "--all", "-o", str(out))
    before = run(_with_memory(config, snapshot))

    for _ in range(2):
        result = invoke(aalis, "import", str(out))
        assert "Imported 0 messages into 0 sessions" in result.stdout
        assert "(3 already present)" in result.stdout
        assert "0 metadata entries written (4 unchanged)" in result.stdout
    assert run(_with_memory(config, snapshot)) == before


def test_import_completes_a_partly_imported_session(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    run(_with_memory(config, seed))
    out = tmp_path / "dump.jsonl"
    invoke(aalis, "export", "--all", "-o", str(out))
    before = run(_with_memory(config, snapshot))

    async def lose_the_tail(store: Any) -> None:  # as if an import had stopped half-way
        await store.delete_messages_by_timestamps("alpha", [1_004, 1_005])
        await store.clear_session("gamma/日本")
        await store.delete_metadata("notes", "beta")

    run(_with_memory(config, lose_the_tail))
    result = invoke(aalis, "import", str(out))
    assert "Imported 3 messages into 2 sessions" in result.stdout
    assert "1 metadata entries written (3 unchanged)" in result.stdout
    assert run(_with_memory(config, snapshot)) == before


def test_import_refuses_a_session_holding_other_messages(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    run(_with_memory(config, seed))
    out = tmp_path / "dump.jsonl"
    invoke(aalis, "export", "--all", "-o", str(out))

    async def diverge(store: Any) -> None:
        await store.clear_session("beta")
        await store.save_message("beta", msg("something else", 5))
        await store.save_metadata("prefs", "global", {"theme": "dark"})

    run(_with_memory(config, diverge))
    changed = run(_with_memory(config, snapshot))
    result = invoke(aalis, "import", str(out), ok=False)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "'beta'" in result.stderr
    assert "--replace" in result.stderr
    assert run(_with_memory(config, snapshot)) == changed  # nothing written

    result = invoke(aalis, "import", "--replace", str(out))
    assert "Imported 3 messages into 1 session" in result.stdout
    after = run(_with_memory(config, snapshot))
    assert after["sessions"]["beta"][0][0].content == ""
    assert after["metadata"][("prefs", "global")] == {"theme": None, "n": 1.5, "ok": True}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "empty file"),
        ("not json\n", "line 1: not valid JSON"),
        ('{"format": "something-else", "version": 1}\n', "line 1: expected the header line"),
        (f'{{"format": "{FORMAT}", "version": 99}}\n', "line 1: format version 99 is newer"),
        (
            f'{{"format": "{FORMAT}", "version": 1}}\n'
            '{"session_id": "s", "archived": false, "message": {"role": "user", "timestamp": 1}}\n'
            '{"session_id": "s", "archived": "no", "message": {"role": "user", "timestamp": 2}}\n',
            "line 3: archived must be true or false",
        ),
        (
            f'{{"format": "{FORMAT}", "version": 1}}\n'
            '{"session_id": "s", "archived": false, "message": {"role": "user"}}\n',
            "line 2: message has no timestamp",
        ),
        (
            f'{{"format": "{FORMAT}", "version": 1}}\n'
            '{"session_id": "s", "archived": false, "message": {"rol": "user", "timestamp": 1}}\n',
            "line 2: invalid message: unknown message field(s): rol",
        ),
        (
            f'{{"format": "{FORMAT}", "version": 1}}\n'
            '{"namespace": "n", "key": "k", "data": [1]}\n',
            "line 2: invalid metadata entry",
        ),
        (
            f'{{"format": "{FORMAT}", "version": 1}}\n'
            '{"namespace": "n", "key": "k", "data": {}}\n'
            '{"namespace": "n", "key": "k", "data": {}}\n',
            "line 3: metadata 'n'/'k' appears twice",
        ),
        (
            f'{{"format": "{FORMAT}", "version": 1}}\n[1, 2]\n',
            "line 2: expected a JSON object",
        ),
    ],
)
def test_a_bad_file_is_one_line_error_and_writes_nothing(
    aalis: click.Group, config: Path, tmp_path: Path, content: str, expected: str
) -> None:
    run(_with_memory(config, seed))
    before = run(_with_memory(config, snapshot))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    result = invoke(aalis, "import", str(bad), ok=False)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.output
    assert run(_with_memory(config, snapshot)) == before


def test_a_missing_file_is_one_line_error(aalis: click.Group, config: Path, tmp_path: Path) -> None:
    result = invoke(aalis, "import", str(tmp_path / "nope.jsonl"), ok=False)
    assert result.exit_code == 1
    assert "cannot read" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_bad_line_after_good_ones_writes_nothing(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    good = [json.dumps({"format": FORMAT, "version": 1})] + [
        json.dumps(
            {
                "session_id": "new",
                "archived": False,
                "message": {"role": "user", "content": str(i), "timestamp": i},
            }
        )
        for i in range(1, 50)
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*good, "{oops"]) + "\n", encoding="utf-8")
    result = invoke(aalis, "import", str(bad), ok=False)
    assert "line 51: not valid JSON" in result.stderr
    assert run(_with_memory(config, snapshot)) == {"sessions": {}, "metadata": {}}


def test_export_output_is_replaced_atomically(
    aalis: click.Group, config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "dump.jsonl"
    out.write_text("previous\n", encoding="utf-8")
    result = invoke(aalis, "export", "missing-session", "-o", str(out), ok=False)
    assert result.exit_code == 1
    assert out.read_text(encoding="utf-8") == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".dump")) == []


# --------------------------------------------------------------------------------------
# the planning rule and migrate_between on two real SQLite stores
# --------------------------------------------------------------------------------------


def _records(*texts: str, archived: int = 0) -> list[StoredMessage]:
    return [StoredMessage(msg(t, i), i < archived) for i, t in enumerate(texts)]


def test_plan_session_rule() -> None:
    wanted = _records("a", "b", "c", archived=1)
    assert plan_session(wanted, [], False) == "copy"
    assert plan_session(wanted, wanted, False) == "skip"
    assert plan_session(wanted, wanted[:2], False) == "append"
    assert plan_session(wanted, _records("a", "b", "c"), False) == "conflict"  # flags differ
    assert plan_session(wanted, _records("x"), False) == "conflict"
    assert plan_session(wanted, [*wanted, *_records("d")], False) == "conflict"  # target longer
    assert plan_session(wanted, _records("x"), True) == "replace"


def test_parse_export_groups_sessions_in_file_order() -> None:
    lines = [
        json.dumps({"format": FORMAT, "version": 1}),
        json.dumps(
            {"session_id": "b", "archived": True, "message": {"role": "user", "timestamp": 1}}
        ),
        json.dumps(
            {"session_id": "a", "archived": False, "message": {"role": "user", "timestamp": 2}}
        ),
        "",
        json.dumps(
            {"session_id": "b", "archived": False, "message": {"role": "user", "timestamp": 3}}
        ),
    ]
    parsed = parse_export(lines)
    assert list(parsed.sessions) == ["b", "a"]
    assert [r.archived for r in parsed.sessions["b"]] == [True, False]
    assert parsed.message_count == 3


@pytest.fixture
async def two_stores(tmp_path: Path) -> Any:
    from aalis_plugin_memory_sqlite import SqliteMemory

    async with SqliteMemory(tmp_path / "a.db") as a, SqliteMemory(tmp_path / "b.db") as b:
        yield a, b


async def test_an_interrupted_migration_is_completed_by_a_rerun(two_stores: Any) -> None:
    source, target = two_stores
    await seed(source)
    first = await migrate_between(source, "a", target, "b")
    assert (first.sessions, first.messages, first.archived, first.metadata) == (3, 10, 3, 4)
    want = await snapshot(source)
    assert await snapshot(target) == want

    # as if the first run had died: one session half copied, one missing, one key missing
    await target.delete_messages_by_timestamps("alpha", [1_003, 1_004, 1_005])
    await target.clear_session("beta")
    await target.commit_metadata([Delete("notes", "beta")])
    seen: list[int] = []
    again = await migrate_between(source, "a", target, "b", progress=seen.append)
    assert (again.sessions_written, again.sessions_skipped) == (2, 1)
    assert again.messages_written == 6
    assert again.metadata_written == 1
    assert sum(seen) == 10
    assert await snapshot(target) == want

    third = await migrate_between(source, "a", target, "b")
    assert (third.sessions_written, third.messages_written, third.metadata_written) == (0, 0, 0)
    assert await snapshot(target) == want


async def test_migration_refuses_a_diverged_target_then_replaces(two_stores: Any) -> None:
    source, target = two_stores
    await seed(source)
    await target.save_message("beta", msg("target's own", 1))
    await target.save_metadata("notes", "beta", {"mine": True})
    before = await snapshot(target)
    with pytest.raises(TransferError, match=r"session\(s\) 'beta'.*--replace"):
        await migrate_between(source, "a", target, "b")
    assert await snapshot(target) == before

    await target.clear_session("beta")
    with pytest.raises(TransferError, match=r"metadata 'notes/beta'"):
        await migrate_between(source, "a", target, "b")

    await migrate_between(source, "a", target, "b", replace=True)
    assert await snapshot(target) == await snapshot(source)


async def test_missing_extension_is_named(two_stores: Any) -> None:
    source, _ = two_stores

    class Bare:  # the required methods only, none of the extensions
        async def list_metadata(self, namespace: str) -> list[Any]:
            return []

    with pytest.raises(TransferError, match=r"'bare' does not implement .*import_messages\(\)"):
        await migrate_between(source, "a", Bare(), "bare")


# --------------------------------------------------------------------------------------
# aalis migrate: SQLite -> MongoDB (nx-27017) -> SQLite
# --------------------------------------------------------------------------------------


def test_migrate_sqlite_to_mongodb_and_back_keeps_everything(
    aalis: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mongodb_uri: str
) -> None:
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-mongodb")
    mongo = {"uri": mongodb_uri, "database": f"mig_{uuid.uuid4().hex[:12]}"}
    config = write_config(tmp_path / "aalis.toml", sqlite="first.db", mongo=mongo)
    monkeypatch.setenv("AALIS_CONFIG", str(config))

    async def seed_more(store: Any) -> None:
        await seed(store)
        for i in range(120):  # a longer session, half archived
            await store.save_message("long", msg(f"line {i}", 10_000 + i // 3))
        await store.archive_span("long", 60, keep=[5, 6])
        await store.commit_metadata([Put("bulk", f"k{i:03d}", {"i": i}) for i in range(30)])

    run(_with_memory(config, seed_more))
    original = run(_with_memory(config, snapshot))
    assert counts(original) == (4, 130, 61, 34)

    result = invoke(aalis, "migrate", "--to", "memory-mongodb")
    assert "Migrated memory-sqlite -> memory-mongodb: 4 sessions (130 messages, 61 archived" in (
        result.stdout
    )
    assert "34 metadata entries in 4 namespaces (34 written); verified." in result.stdout
    on_mongo = run(_with_memory(config, snapshot, provider="memory-mongodb"))
    assert counts(on_mongo) == (4, 130, 61, 34)
    assert on_mongo == original

    rerun = invoke(aalis, "migrate", "--to", "memory-mongodb", "--no-progress")
    assert "0 written, 4 already there" in rerun.stdout
    assert counts(run(_with_memory(config, snapshot, provider="memory-mongodb"))) == (
        4,
        130,
        61,
        34,
    )

    # and back, into a fresh SQLite file
    (tmp_path / "back").mkdir()
    back = write_config(tmp_path / "back" / "aalis.toml", sqlite="back.db", mongo=mongo)
    monkeypatch.setenv("AALIS_CONFIG", str(back))
    assert counts(run(_with_memory(back, snapshot))) == (0, 0, 0, 0)
    invoke(aalis, "migrate", "--from", "memory-mongodb", "--to", "memory-sqlite")
    returned = run(_with_memory(back, snapshot))
    assert counts(returned) == (4, 130, 61, 34)
    assert returned == original


def test_migrate_to_an_inactive_provider_is_one_line_error(
    aalis: click.Group, config: Path
) -> None:
    result = invoke(aalis, "migrate", "--to", "memory-mongodb", ok=False)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "target memory provider 'memory-mongodb' is not active" in result.stderr
    same = invoke(aalis, "migrate", "--to", "memory-sqlite", ok=False)
    assert "same provider" in same.stderr
    # The one-line error says how to name the source (docs/host/postgres.md's newcomer had
    # pinned the target first).
    assert "aalis migrate --from" in same.stderr
    assert same.stderr.count("\n") == 1
