"""The file itself: pragmas, permissions, versions and migrations from older files."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
import threading
from pathlib import Path

import attrs
import pytest
from aalis_api_memory import MessageIdConflict, RecentMessagesQuery
from aalis_plugin_memory_sqlite import SCHEMA_VERSION, SchemaTooNew, SqliteMemory
from aalis_plugin_memory_sqlite._schema import MIGRATION_NAMES, MIGRATION_SET, connect

T0 = 1_700_000_000_000

# The database as version 1 of this plugin left it: the DDL is copied from the file migration
# 0001 creates (including sqlite-utils' record of it), so this test keeps checking an upgrade
# from that shape however the migrations evolve.
V1_DDL = """
CREATE TABLE "_sqlite_migrations" (
   "id" INTEGER PRIMARY KEY,
   "migration_set" TEXT,
   "name" TEXT,
   "applied_at" TEXT
);
CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"
    ON "_sqlite_migrations" ("migration_set", "name");
CREATE TABLE "messages" (
   "seq" INTEGER PRIMARY KEY,
   "session_id" TEXT NOT NULL,
   "timestamp" INTEGER NOT NULL,
   "archived" INTEGER NOT NULL DEFAULT 0,
   "kind" TEXT,
   "role" TEXT NOT NULL,
   "data" TEXT NOT NULL
);
CREATE INDEX "messages_session"
    ON "messages" ("session_id", "archived", "timestamp");
CREATE TABLE "metadata" (
   "namespace" TEXT NOT NULL,
   "key" TEXT NOT NULL,
   "data" TEXT NOT NULL,
   "updated_at" INTEGER NOT NULL,
   PRIMARY KEY ("namespace", "key")
);
INSERT INTO _sqlite_migrations (migration_set, name, applied_at)
    VALUES ('aalis-memory-sqlite', '0001_messages_and_metadata', '2026-01-01 00:00:00+00:00');
PRAGMA user_version = 1;
"""


def _v1_row(
    session: str, ts: int, archived: int, role: str, content: str, **extra: object
) -> tuple[object, ...]:
    data = {"role": role, "content": content, "timestamp": T0 + ts, **extra}
    return (session, T0 + ts, archived, extra.get("kind"), role, json.dumps(data))


def make_v1_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(V1_DDL)
    rows = [
        _v1_row("a", 1, 1, "user", "old question"),
        _v1_row("a", 2, 1, "assistant", "old answer"),
        _v1_row("a", 3, 0, "notice", "divider", kind="event-marker"),
        _v1_row("a", 4, 0, "user", "hello", metadata={"platform": "qq"}),
        _v1_row("a", 5, 0, "assistant", "hi there", metadata={"platform": 12}),
        _v1_row("b", 6, 0, "user", "other session", metadata={"platform": "qq"}),
    ]
    conn.executemany(
        "INSERT INTO messages (session_id, timestamp, archived, kind, role, data) VALUES (?,?,?,?,?,?)",
        rows,
    )
    conn.execute("INSERT INTO metadata VALUES ('summary', 'a', '{\"text\": \"so far\"}', 5)")
    conn.execute("INSERT INTO metadata VALUES ('summary', 'broken', '{oops', 6)")
    conn.close()


async def test_a_new_file_is_private_wal_and_current(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "memory.db"
    async with SqliteMemory(path, synchronous="FULL", busy_timeout_ms=1234) as store:
        pragmas = await store.run_on_connection(
            lambda conn: [
                conn.execute(f"PRAGMA {name}").fetchone()[0]
                for name in ("journal_mode", "synchronous", "busy_timeout", "user_version")
            ]
        )
    assert pragmas == ["wal", 2, 1234, SCHEMA_VERSION]  # synchronous FULL == 2
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path.parent.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    conn = sqlite3.connect(path)
    applied = conn.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY id", (MIGRATION_SET,)
    ).fetchall()
    conn.close()
    assert [name for (name,) in applied] == list(MIGRATION_NAMES)


async def test_default_synchronous_is_normal(tmp_path: Path) -> None:
    async with SqliteMemory(tmp_path / "m.db") as store:
        level = await store.run_on_connection(
            lambda conn: conn.execute("PRAGMA synchronous").fetchone()[0]
        )
    assert level == 1


async def test_an_existing_folder_keeps_its_permissions(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    async with SqliteMemory(tmp_path / "m.db"):
        pass
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o755


async def test_a_version_1_file_is_migrated_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    make_v1_file(path)
    async with SqliteMemory(path) as store:
        history = await store.get_history("a", math.inf)
        assert [message.content for message in history] == ["divider", "hello", "hi there"]
        full = await store.get_full_history("a", math.inf)
        assert [message.content for message in full][:2] == ["old question", "old answer"]
        # Counters were backfilled: the marker is not counted, archived rows are not active.
        assert await store.count_history("a") == 2
        sessions = {info.session_id: info for info in await store.list_sessions()}
        assert (sessions["a"].active, sessions["a"].archived, sessions["a"].last_timestamp) == (
            3,
            2,
            T0 + 5,
        )
        assert (sessions["b"].active, sessions["b"].archived) == (1, 0)
        # The platform column was backfilled from the JSON (only string platforms match).
        got = await store.get_recent_messages_across_sessions(RecentMessagesQuery(platform="qq"))
        assert [(r.session_id, r.message.content) for r in got] == [
            ("a", "hello"),
            ("b", "other session"),
        ]
        assert await store.get_metadata("summary", "a") == {"text": "so far"}
        assert await store.list_metadata_keys("summary") == ["a", "broken"]
        # The history rule on the migrated file, including markers, is the current one.
        assert [message.content for message in await store.get_history("a", 1)] == ["hi there"]
        # A read message is stored already: saving it again names a stored id.
        with pytest.raises(MessageIdConflict):
            await store.save_message("a", history[0].with_timestamp(T0 + 9))
        await store.save_message("a", attrs.evolve(history[0], timestamp=T0 + 9, id=None))
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


async def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    make_v1_file(path)
    conn = sqlite3.connect(path, isolation_level=None)
    # Something in the way of migration 2 (it creates this table).
    conn.execute("CREATE TABLE session_stats (x)")
    before = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    conn.close()
    with pytest.raises(sqlite3.OperationalError, match="session_stats"):
        async with SqliteMemory(path):
            pass
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before
    assert conn.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()[0] == 1
    conn.close()


async def test_a_file_from_a_newer_version_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE something_new (x)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(SchemaTooNew, match="upgrade the plugin"):
        async with SqliteMemory(path):
            pass
    assert path.read_bytes() == before


def test_concurrent_first_opens_migrate_once(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def opener() -> None:
        try:
            start.wait()
            connect(path).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()[0] == len(
        MIGRATION_NAMES
    )
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def make_v2_file(path: Path) -> None:
    """A file as version 2 of this plugin left it (before message identity): the v1 DDL,
    migrated to 2 by the released migration, then rows written the way version 2 wrote them."""
    from aalis_plugin_memory_sqlite._migrations import migrate

    make_v1_file(path)
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, target=2) == 2
    # Version 2 stored the timestamp inside the JSON too (codec.encode_message).
    x = {"role": "user", "content": "x", "timestamp": T0 + 7}
    y = {"role": "user", "content": "y", "timestamp": T0 + 7}
    rows = [
        ("c", T0 + 7, 0, 0, None, "user", None, json.dumps(x)),
        ("c", T0 + 7, 0, 0, None, "user", None, json.dumps(y)),
        ("c", T0 + 8, 0, 0, None, "user", None, "{damaged"),
    ]
    conn.executemany(
        "INSERT INTO messages (session_id, timestamp, archived, control, kind, role, platform,"
        " data) VALUES (?,?,?,?,?,?,?,?)",
        rows,
    )
    conn.execute(
        "INSERT INTO session_stats VALUES ('c', 3, 3, 0, ?)",
        (T0 + 8,),
    )
    conn.close()


def _column_ids(path: Path) -> dict[int, tuple[str | None, str]]:
    conn = sqlite3.connect(path)
    try:
        return {
            seq: (ident, data)
            for seq, ident, data in conn.execute("SELECT seq, message_id, data FROM messages")
        }
    finally:
        conn.close()


async def test_a_version_2_file_gives_every_message_an_id_that_survives_reopening(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v2.db"
    make_v2_file(path)
    async with SqliteMemory(path) as store:
        every = [m for sid in ("a", "b", "c") for m in await store.get_full_history(sid, math.inf)]
        assert len(every) == 8  # the damaged row is still skipped
        ids = [m.id for m in every]
        assert all(isinstance(i, str) and len(i) == 26 for i in ids)
        assert len(set(ids)) == len(ids)
        # The two messages of one millisecond are two messages, each found by its id.
        x, y = await store.get_history("c", math.inf)
        found = await store.get_messages_by_ids([y.id, x.id])  # type: ignore[list-item]
        assert [r.message.content for r in found] == ["y", "x"]
        assert await store.delete_messages_by_ids("c", [x.id]) == 1  # type: ignore[list-item]
    columns = _column_ids(path)
    # Every row has an id in its column, the damaged one too, and the JSON agrees with it.
    assert all(ident for ident, _data in columns.values())
    for ident, data in columns.values():
        if data != "{damaged":
            assert json.loads(data)["id"] == ident
    async with SqliteMemory(path) as store:
        again = [m for sid in ("a", "b", "c") for m in await store.get_full_history(sid, math.inf)]
    assert [m.id for m in again] == [i for i in ids if i != x.id]
    assert _column_ids(path) == columns
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


async def test_a_failed_identity_migration_leaves_the_version_2_file_as_it_was(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v2.db"
    make_v2_file(path)
    conn = sqlite3.connect(path, isolation_level=None)
    # Something in the way of migration 3 (it creates this index), found after every row
    # was named: the naming must be undone with the rest.
    conn.execute("CREATE INDEX messages_id ON messages (role)")
    before = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    data_before = conn.execute("SELECT seq, data FROM messages ORDER BY seq").fetchall()
    conn.close()
    with pytest.raises(sqlite3.OperationalError, match="messages_id"):
        async with SqliteMemory(path):
            pass
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before
    assert conn.execute("SELECT seq, data FROM messages ORDER BY seq").fetchall() == data_before
    conn.close()


async def test_a_version_1_file_migrates_through_to_ids(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    make_v1_file(path)
    async with SqliteMemory(path) as store:
        full = await store.get_full_history("a", math.inf)
        assert len({m.id for m in full}) == len(full) == 5
        [record] = await store.get_messages_by_ids([full[0].id])  # type: ignore[list-item]
        assert (record.session_id, record.archived, record.message) == ("a", True, full[0])


async def test_an_old_export_of_a_version_2_file_reimported_after_the_migration_writes_nothing(
    tmp_path: Path,
) -> None:
    from aalis_memory_tools import import_file

    path = tmp_path / "v2.db"
    make_v2_file(path)
    # What `aalis export --all` wrote from this file before message identity: the same
    # records, without ids (the rows' JSON as version 2 stored it).
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT session_id, archived, data FROM messages WHERE json_valid(data)"
        " ORDER BY session_id, timestamp, seq"
    ).fetchall()
    conn.close()
    lines = [{"format": "aalis-memory-export", "version": 1}]
    lines += [
        {"session_id": sid, "archived": bool(archived), "message": json.loads(data)}
        for sid, archived, data in rows
    ]
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    async with SqliteMemory(path) as store:  # migrates: every message gets a new id
        before = {sid: await store.export_session(sid) for sid in ("a", "b", "c")}
        report = await import_file(store, old)
        assert (report.messages_written, report.sessions_skipped) == (0, 3)
        assert {sid: await store.export_session(sid) for sid in ("a", "b", "c")} == before
