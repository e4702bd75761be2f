"""What the kit cannot see: the file, other processes' writes, the RAM matrix, failures."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aalis_api_vectorstore import VectorStoreError, VectorStoreUnavailable, vectorstore
from aalis_api_vectorstore_conformance import T0, rec, scope, seeded_vector
from aalis_plugin_vectorstore_sqlite import (
    PRIORITY,
    SqliteVectorStore,
    StoreClosed,
    VectorstoreSqlite,
)
from aalis_plugin_vectorstore_sqlite._schema import MIGRATIONS, SCHEMA_VERSION, SchemaTooNew

from aalis_core.testing import running_host


async def test_vectors_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as store:
        await store.upsert([rec("s1", i, seeded_vector(i)) for i in range(5)])
    async with SqliteVectorStore(path) as store:
        hits = await store.search(seeded_vector(3), 1, scope(["s1"]))
        assert [h.timestamp for h in hits] == [T0 + 3]
        assert (await store.stats()).total == 5


async def test_the_file_is_private_wal_and_versioned(tmp_path: Path) -> None:
    path = tmp_path / "new" / "v.db"
    async with SqliteVectorStore(path) as store:
        await store.upsert([rec("s1", 1, seeded_vector(1))])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        names = [r[0] for r in conn.execute("SELECT name FROM vector_migrations ORDER BY name")]
        assert names == [name for name, _ in MIGRATIONS]
    finally:
        conn.close()


async def test_another_connections_writes_invalidate_the_matrix(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    query = seeded_vector("q")
    async with SqliteVectorStore(path) as reader, SqliteVectorStore(path) as writer:
        await writer.upsert([rec("s1", 1, seeded_vector(1))])
        assert [h.timestamp for h in await reader.search(query, 5, scope(["s1"]))] == [T0 + 1]
        await writer.upsert([rec("s1", 2, query)])
        assert (await reader.search(query, 1, scope(["s1"])))[0].timestamp == T0 + 2
        await writer.delete("s1", timestamps=[T0 + 2])
        assert [h.timestamp for h in await reader.search(query, 5, scope(["s1"]))] == [T0 + 1]
        await writer.upsert([rec("s1", 1, [-x for x in query])])
        (hit,) = await reader.search(query, 1, scope(["s1"]))
        assert hit.score < 0


async def test_appending_gives_the_same_answers_as_a_fresh_load(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    queries = [seeded_vector(f"q{i}") for i in range(3)]
    async with SqliteVectorStore(path) as store:
        for step in range(6):  # search between writes, so later writes take the append path
            await store.upsert(
                [
                    rec(f"s{step % 3}", step * 10 + i, seeded_vector(f"{step}-{i}"))
                    for i in range(10)
                ]
            )
            await store.search(queries[0], 1, scope(None))
        warm = [await store.search(q, 7, scope(["s0", "s2"])) for q in queries]
    async with SqliteVectorStore(path) as fresh:
        cold = [await fresh.search(q, 7, scope(["s0", "s2"])) for q in queries]
    assert [[h.key for h in hits] for hits in warm] == [[h.key for h in hits] for hits in cold]


async def test_a_role_filter_still_filters_after_rows_of_a_new_role_are_appended(
    tmp_path: Path,
) -> None:
    # A filter that admits every role of the model is dropped (the matrix knows its roles):
    # a row of another role appended after the matrix was loaded must make it count again.
    query = seeded_vector("q")
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        await store.upsert([rec("s", T0 + i, seeded_vector(f"u{i}")) for i in range(5)])
        assert len(await store.search(query, 10, scope(None, roles=["user"]))) == 5
        await store.upsert([rec("s", T0 + 100, query, role="tool")])  # the append path
        hits = await store.search(query, 10, scope(None, roles=["user"]))
        assert len(hits) == 5
        assert all(h.role == "user" for h in hits)
        assert len(await store.search(query, 10, scope(None))) == 6


async def test_a_second_process_sees_this_ones_writes(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as store:
        await store.upsert([rec("s1", 1, seeded_vector(1))])
        await store.search(seeded_vector(1), 1, scope(None))  # warm the matrix
        script = textwrap.dedent(
            f"""
            import asyncio
            from aalis_api_vectorstore_conformance import rec, seeded_vector
            from aalis_plugin_vectorstore_sqlite._store import SqliteVectorStore

            async def main():
                async with SqliteVectorStore({str(path)!r}) as store:
                    await store.upsert([rec("s1", 2, seeded_vector("other"))])

            asyncio.run(main())
            """
        )
        await asyncio.to_thread(subprocess.run, [sys.executable, "-c", script], check=True)
        hits = await store.search(seeded_vector("other"), 1, scope(["s1"]))
        assert hits[0].timestamp == T0 + 2


async def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    path.write_bytes(b"this is not a database at all" * 100)
    before = path.read_bytes()
    with pytest.raises(VectorStoreUnavailable, match=r"v\.db"):
        await SqliteVectorStore(path).open()
    assert path.read_bytes() == before


async def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(SchemaTooNew, match="upgrade"):
        await SqliteVectorStore(path).open()
    assert path.read_bytes() == before


async def test_a_database_with_foreign_tables_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE vectors (x)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with pytest.raises(VectorStoreUnavailable, match="cannot use"):
        await SqliteVectorStore(path).open()


async def test_no_file_until_the_first_write(tmp_path: Path) -> None:
    path = tmp_path / "data" / "v.db"
    async with SqliteVectorStore(path) as store:
        assert await store.search(seeded_vector(1), 5, scope(None)) == []
        assert (await store.stats()).total == 0
        assert await store.delete("s1") == 0
        assert await store.delete_all() == 0
        assert await store.upsert([]) == 0
        assert not path.exists()
        assert not path.parent.exists()
        await store.upsert([rec("s1", 1, seeded_vector(1))])
        assert path.is_file()
        assert len(await store.search(seeded_vector(1), 5, scope(None))) == 1


async def test_a_file_made_by_another_process_after_open_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as reader:
        async with SqliteVectorStore(path) as writer:
            await writer.upsert([rec("s1", 1, seeded_vector(1))])
        assert len(await reader.search(seeded_vector(1), 5, scope(None))) == 1


async def test_a_closed_store_says_so(tmp_path: Path) -> None:
    store = await SqliteVectorStore(tmp_path / "v.db").open()
    await store.close()
    await store.close()
    with pytest.raises(StoreClosed, match="not open"):
        await store.search(seeded_vector(1), 1, scope(None))


async def test_a_locked_file_is_an_error_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path, busy_timeout_ms=100) as store:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(VectorStoreError, match="locked"):
                await store.upsert([rec("s1", 1, seeded_vector(1))])
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert await store.upsert([rec("s1", 1, seeded_vector(1))]) == 1


async def test_the_plugin_provides_the_store_beside_the_memory_file(tmp_path: Path) -> None:
    async with running_host([VectorstoreSqlite()], data_dir=tmp_path) as host:
        info = {i.name: i for i in host.plugins()}
        assert info["vectorstore-sqlite"].state == "active", info["vectorstore-sqlite"].error
        handle = host.capability(vectorstore)
        assert handle.provider == "vectorstore-sqlite"
        await handle.use.upsert([rec("s1", 1, seeded_vector(1))])
        assert (await handle.use.stats()).total == 1
    assert (tmp_path / "aalis-vectors.db").is_file()
    assert PRIORITY == 10


async def test_the_plugin_reports_a_corrupt_file_as_its_error(tmp_path: Path) -> None:
    (tmp_path / "aalis-vectors.db").write_bytes(b"garbage" * 1000)
    async with running_host([VectorstoreSqlite()], data_dir=tmp_path) as host:
        info = {i.name: i for i in host.plugins()}["vectorstore-sqlite"]
        assert info.state == "error"
        assert "aalis-vectors.db" in (info.error or "")
        assert not host.capability(vectorstore).present


async def test_config_is_validated() -> None:
    from aalis_plugin_vectorstore_sqlite import SqliteVectorConfig

    with pytest.raises(ValueError, match="synchronous"):
        SqliteVectorConfig(synchronous="sometimes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="path"):
        SqliteVectorConfig(path=3)  # type: ignore[arg-type]
    assert SqliteVectorConfig(synchronous="full").synchronous == "FULL"


async def test_long_session_lists_and_timestamp_lists(tmp_path: Path) -> None:
    # Past 500 values the filter goes through a temporary table and deletes run in chunks.
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        await store.upsert([rec(f"s{i}", i, seeded_vector(i, 8)) for i in range(1200)])
        wanted = {f"s{i}" for i in range(0, 1200, 2)}
        hits = await store.search(seeded_vector(3, 8), 1200, scope(wanted))
        assert {h.session_id for h in hits} == wanted
        hits = await store.search(seeded_vector(3, 8), 1200, scope(None, exclude=wanted))
        assert {h.session_id for h in hits} == {f"s{i}" for i in range(1, 1200, 2)}
        hits = await store.search(seeded_vector(3, 8), 1200, scope(wanted, exclude=wanted))
        assert hits == []
        await store.upsert([rec("one", i, seeded_vector(i, 8)) for i in range(1500)])
        assert await store.delete("one", timestamps=[T0 + i for i in range(0, 1500, 3)]) == 500
        assert await store.delete("one", [f"one/{i}/user" for i in range(1, 1500, 3)]) == 500
        assert (await store.stats()).total == 1200 + 500


async def test_vectors_from_before_identity_are_dropped_and_their_sessions_named(
    tmp_path: Path,
) -> None:
    # A file of schema 1 (keyed on session, timestamp, role): its vectors have no message
    # id, so the migration drops them and remembers their sessions for re-embedding.
    from aalis_plugin_vectorstore_sqlite._schema import migrate

    path = tmp_path / "v.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=1)
    conn.execute("INSERT INTO models (model_id, dim) VALUES ('m', 2)")
    for sid, ts in (("a", 1), ("a", 2), ("b", 1)):
        conn.execute(
            "INSERT INTO vectors (session_id, timestamp, role, model_id, text, vector) "
            "VALUES (?, ?, 'user', 'm', 'old', x'0000803f00000000')",
            (sid, ts),
        )
    conn.close()
    async with SqliteVectorStore(path) as store:
        assert (await store.stats()).total == 0
        assert await store.dropped_sessions() == ["a", "b"]
        await store.upsert([rec("a", 1, [1.0, 0.0], model_id="m")])
        assert (await store.stats()).counts == {"m": 1}
        await store.acknowledge_dropped(["a"])
        assert await store.dropped_sessions() == ["b"]
    async with SqliteVectorStore(path) as store:  # reopening migrates nothing again
        assert await store.dropped_sessions() == ["b"]
        assert (await store.stats()).counts == {"m": 1}
