"""The FTS5 index behind ``lexical_search``: migrated, kept in step, shared across processes.

The rules themselves are the kit's (``LexicalSearchConformance``); these are what only the
file shows (docs/recall.md, "Lexical leg").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import attrs
import pytest
from aalis_api_vectorstore import DimensionMismatch, LexicalSearch
from aalis_api_vectorstore_conformance import rec, scope, seeded_vector
from aalis_plugin_vectorstore_sqlite import SqliteVectorStore
from aalis_plugin_vectorstore_sqlite._schema import MIGRATIONS, migrate


def _indexed(path: Path) -> tuple[list[int], list[int]]:
    """(row ids of vectors, row ids of the lexical index), each sorted."""
    conn = sqlite3.connect(path)
    try:
        vectors = [r[0] for r in conn.execute("SELECT id FROM vectors ORDER BY id")]
        lexical = [r[0] for r in conn.execute("SELECT rowid FROM vectors_lex ORDER BY rowid")]
    finally:
        conn.close()
    return vectors, lexical


async def test_the_store_is_a_lexical_search(tmp_path: Path) -> None:
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        assert isinstance(store, LexicalSearch)


async def test_an_older_file_is_indexed_by_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=2)
    conn.execute("INSERT INTO models (model_id, dim) VALUES ('kit-model-a', 2)")
    for i, text in enumerate(["order AX-55812-K shipped", "王磊明天到", "nothing here"]):
        conn.execute(
            "INSERT INTO vectors (message_id, session_id, timestamp, role, model_id, text, "
            "vector) VALUES (?, 's1', ?, 'user', 'kit-model-a', ?, x'0000803f00000000')",
            (f"m{i}", i, text),
        )
    conn.close()
    async with SqliteVectorStore(path) as store:
        assert [
            h.message_id for h in await store.lexical_search("AX-55812-K", 5, scope(["s1"]))
        ] == ["m0"]
        assert [h.message_id for h in await store.lexical_search("王磊", 5, scope(["s1"]))] == [
            "m1"
        ]
    vectors, lexical = _indexed(path)
    assert vectors == lexical
    assert len(vectors) == 3
    conn = sqlite3.connect(path)
    names = [r[0] for r in conn.execute("SELECT name FROM vector_migrations ORDER BY name")]
    conn.close()
    assert names == [name for name, _ in MIGRATIONS]
    assert "0003_lexical_index" in names


async def test_the_index_follows_every_write_row_for_row(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as store:
        await store.upsert(
            [rec(f"s{i % 3}", i, seeded_vector(i), text=f"t-{i}") for i in range(30)]
        )
        await store.upsert([rec("s0", 0, seeded_vector(0), text="rewritten R-1")])
        await store.delete("s1", ["s1/1/user", "s1/4/user"])
        await store.delete("s2")
        vectors, lexical = _indexed(path)
        assert vectors == lexical
        assert len(vectors) == 30 - 2 - 10
        with pytest.raises(DimensionMismatch):  # a refused batch indexes nothing either
            await store.upsert(
                [rec("s9", 1, seeded_vector(1), text="ghost G-1"), rec("s9", 2, [1.0, 2.0])]
            )
        assert await store.lexical_search("ghost G-1", 5, scope(None)) == []
        assert _indexed(path) == (vectors, lexical)
        await store.delete_all()
        assert _indexed(path) == ([], [])


async def test_another_process_writes_are_searched(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as reader, SqliteVectorStore(path) as writer:
        await writer.upsert([rec("s1", 1, seeded_vector(1), text="ticket TK-31")])
        assert len(await reader.lexical_search("TK-31", 5, scope(["s1"]))) == 1
        await writer.delete("s1")
        assert await reader.lexical_search("TK-31", 5, scope(["s1"])) == []


async def test_a_missing_file_finds_nothing_and_stays_missing(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as store:
        assert await store.lexical_search("anything", 5, scope(None)) == []
    assert not path.exists()


async def test_long_session_lists_filter_inside_the_match(tmp_path: Path) -> None:
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        await store.upsert(
            [rec(f"s{i}", i, seeded_vector(i), text=f"code Q-{i % 2}") for i in range(1200)]
        )
        wanted = [f"s{i}" for i in range(0, 1200, 2)]  # 600 sessions: a temp table
        hits = await store.lexical_search("Q-0", 1000, scope(wanted))
        assert len(hits) == 600
        assert {h.text for h in hits} == {"code Q-0"}
        hits = await store.lexical_search("code", 1000, scope(None, exclude=wanted))
        assert [h.text for h in hits] == ["code Q-1"] * len(hits)
        assert len(hits) == 600


async def test_common_terms_only_fill_up_and_keep_k_in_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With a low bar for "common", the same rules hold on the path a long history takes:
    # rare terms ranked first, common ones filling up to k, the scope inside both.
    from aalis_plugin_vectorstore_sqlite import _lexical

    monkeypatch.setattr(_lexical, "COMMON_ROWS", 5)
    monkeypatch.setattr(_lexical, "WINDOW", 4)
    records = [
        rec(f"other{i % 3}", i, seeded_vector(i), text=f"the order status {i}") for i in range(60)
    ]
    records += [
        rec("mine", 100 + i, seeded_vector(f"m{i}"), text=f"my order status {i}") for i in range(6)
    ]
    records.append(rec("mine", 200, seeded_vector("t"), text="AX-55812-K left the warehouse"))
    records.append(rec("other0", 201, seeded_vector("o"), text="AX-55812-K order status too"))
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        await store.upsert(records)
        hits = await store.lexical_search("order status AX-55812-K", 5, scope(["mine"]))
        assert hits[0].text == "AX-55812-K left the warehouse"
        assert len(hits) == 5
        assert {h.session_id for h in hits} == {"mine"}
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        assert min(scores) > 0
        # Only common terms: the latest matches in scope, k of them.
        hits = await store.lexical_search("order status", 3, scope(["mine"]))
        assert [h.text for h in hits] == [f"my order status {i}" for i in (5, 4, 3)]


async def test_the_check_finds_and_repairs_a_lexical_index_edited_by_hand(tmp_path: Path) -> None:
    from aalis_api_vectorstore import LexicalDrift, LexicalIndexCheck

    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as store:
        assert isinstance(store, LexicalIndexCheck)
        await store.upsert(
            [
                rec("s1", 1, seeded_vector(1), text="order AX-55812-K shipped"),
                rec("s1", 2, seeded_vector(2), text="王磊明天到"),
                rec("s2", 3, seeded_vector(3), text="parcel SF1402938475 is late"),
            ]
        )
        conn = sqlite3.connect(path)
        conn.execute("DELETE FROM vectors_lex WHERE rowid = 1")  # missing
        conn.execute("UPDATE vectors_lex SET words = 'x', idents = '' WHERE rowid = 2")  # stale
        conn.execute("INSERT INTO vectors_lex (rowid, words, idents) VALUES (99, 'ghost', '')")
        conn.commit()
        conn.close()
        assert await store.lexical_search("AX-55812-K", 5, scope(["s1"])) == []
        wanted = LexicalDrift(missing=["s1/1/user"], stale=["s1/2/user"], extra=1)
        assert await store.lexical_check() == wanted
        # a session's check names its rows only; entries of no row belong to no session
        assert await store.lexical_check("s1") == attrs.evolve(wanted, extra=0)
        assert await store.lexical_check("s2") == LexicalDrift()
        assert await store.lexical_repair() == wanted
        assert await store.lexical_check() == LexicalDrift()
        assert _indexed(path)[0] == _indexed(path)[1]
        hits = await store.lexical_search("AX-55812-K 王磊", 5, scope(["s1"]))
        assert sorted(h.message_id for h in hits) == ["s1/1/user", "s1/2/user"]
