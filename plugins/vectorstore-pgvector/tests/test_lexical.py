"""The lexical leg (``lexical_search``) on a real PostgreSQL: identifiers, names, scope, upkeep.

The hard case of docs/recall.md: among many messages in the same words around another
identifier, the one carrying the identifier the query names comes first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg
import pytest
import pytest_asyncio
from aalis_api_vectorstore import ScopeFilter, VectorRecord
from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore
from aalis_test_support.postgres import TestServer, fresh_schema

M = "m"


def rec(
    mid: str,
    text: str,
    *,
    session: str = "s",
    ts: int = 0,
    role: str = "user",
    model: str = M,
    platform: str | None = None,
    user: str | None = None,
) -> VectorRecord:
    return VectorRecord(
        message_id=mid,
        session_id=session,
        timestamp=ts,
        role=role,
        model_id=model,
        text=text,
        vector=[1.0, 0.5],
        platform=platform,
        user_id=user,
    )


def every(**narrowing: object) -> ScopeFilter:
    return ScopeFilter(model_id=M, session_ids=None, **narrowing)  # type: ignore[arg-type]


@pytest_asyncio.fixture
async def store(pg_server: TestServer) -> AsyncIterator[PgvectorStore]:
    with fresh_schema(pg_server, "vl") as schema:
        s = await PgvectorStore.connect(
            PgvectorConfig(uri=pg_server.uri, schema=schema, max_pool_size=2)
        )
        try:
            yield s
        finally:
            await s.close()


async def test_the_exact_order_number_ranks_first_among_near_identical_messages(
    store: PgvectorStore,
) -> None:
    records = [
        rec(f"o{n}", f"Where is my order AX-558{n:02d}-K? It has not arrived yet.", ts=n)
        for n in range(40)
    ]
    await store.upsert(records)
    hits = await store.lexical_search("what happened to order AX-55812-K", 5, every())
    assert hits[0].message_id == "o12"
    assert hits[0].score > hits[1].score > 0
    # The digits alone find it too: the identifier is indexed by its parts.
    assert (await store.lexical_search("the 55812 one", 3, every()))[0].message_id == "o12"


@pytest.mark.parametrize(
    ("query", "distractor", "right"),
    [
        (
            "what did I say about order AX-55812-K being late and the refund",
            "I say order AX-558{n:02d}-K being late means a refund, about time",
            "AX-55812-K: still waiting",
        ),
        (
            "王磊的电话号码是多少",
            "王{name}的电话号码是多少",
            "王磊还没回复",
        ),
        (
            "what was wrong with parse_refund_window when the date is empty",
            "what was wrong with parse_refund_windows{n} when the date is empty",
            "parse_refund_window returns None",
        ),
    ],
    ids=["order", "chinese-name", "function"],
)
async def test_the_identifier_outweighs_distractors_that_repeat_the_querys_wording(
    store: PgvectorStore, query: str, distractor: str, right: str
) -> None:
    # A leg that weighs every query term alike ranks the distractors first: they hold
    # many more of the query's terms than the one message with the identifier.
    names = "蕾雷石军伟芳娜敏静丽强洋艳勇杰娟涛明超秀霞平刚桂英华玉兰萍红"
    records = [
        rec(f"d{n}", distractor.format(n=n, name=names[n]), ts=n) for n in range(30) if n != 12
    ]
    records.append(rec("right", right, ts=99))
    await store.upsert(records)
    hits = await store.lexical_search(query, 5, every())
    assert hits[0].message_id == "right"


async def test_a_two_character_chinese_name_ranks_above_its_homophones(
    store: PgvectorStore,
) -> None:
    names = ["王磊", "王蕾", "王雷", "汪磊", "黄磊", "王石"]
    await store.upsert(
        [
            rec(f"n{i}", f"{name}的电话号码是多少\uff1f我明天要找{name}\u3002", ts=i)
            for i, name in enumerate(names)
        ]
    )
    hits = await store.lexical_search("王磊的电话", 6, every())
    assert hits[0].message_id == "n0"
    assert hits[0].score > hits[1].score
    # In an English sentence too, and as the whole query.
    assert (await store.lexical_search("王蕾", 3, every()))[0].message_id == "n1"
    assert (await store.lexical_search("who is 黄磊?", 3, every()))[0].message_id == "n4"


async def test_a_function_name_ranks_above_its_plural_and_its_relatives(
    store: PgvectorStore,
) -> None:
    names = [
        "parse_refund_windows",
        "parse_refund_window_v2",
        "parse_refund_window",
        "parse_refund_policy",
        "ParseRefundWindow",
    ]
    await store.upsert(
        [
            rec(f"f{i}", f"the bug is in {name} when the date is empty", ts=i)
            for i, name in enumerate(names)
        ]
    )
    hits = await store.lexical_search("what was wrong with parse_refund_window?", 5, every())
    assert hits[0].message_id == "f2"
    assert hits[0].score > hits[1].score
    camel = await store.lexical_search("ParseRefundWindow", 5, every())
    assert camel[0].message_id == "f4"


async def test_english_words_and_numbers_find_their_message(store: PgvectorStore) -> None:
    await store.upsert(
        [
            rec("a", "My dentist appointment is on Tuesday at the clinic", ts=1),
            rec("b", "The invoice total came to 4471 euros", ts=2),
            rec("c", "We talked about the weather for a while", ts=3),
        ]
    )
    assert [h.message_id for h in await store.lexical_search("Dentist?", 5, every())] == ["a"]
    assert [h.message_id for h in await store.lexical_search("invoice 4471", 5, every())] == ["b"]
    # No shared term: nothing (not every record with a score of 0).
    assert await store.lexical_search("quantum chromodynamics", 5, every()) == []
    assert await store.lexical_search("the of and", 5, every()) == []
    assert await store.lexical_search("", 5, every()) == []


async def test_hits_carry_the_records_fields_and_descending_positive_scores(
    store: PgvectorStore,
) -> None:
    await store.upsert(
        [
            rec("x", "refund for order 991", session="s1", ts=5, platform="web", user="u1"),
            rec("y", "refund", session="s2", ts=6, role="assistant"),
            rec("z", "order 991 refund refund and more words around it", session="s3", ts=7),
        ]
    )
    hits = await store.lexical_search("refund order 991", 10, every())
    assert {h.message_id for h in hits} == {"x", "y", "z"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.score > 0 for h in hits)
    first = hits[0]
    assert (first.message_id, first.session_id, first.timestamp, first.role) == (
        "x",
        "s1",
        5,
        "user",
    )
    assert (first.model_id, first.text, first.platform, first.user_id) == (
        M,
        "refund for order 991",
        "web",
        "u1",
    )
    assert len(await store.lexical_search("refund", 2, every())) == 2
    assert await store.lexical_search("refund", 0, every()) == []


async def test_quotes_backslashes_colons_and_nul_are_only_text(store: PgvectorStore) -> None:
    texts = ["meet at 10:30 in src/app.py", "O'Brien said \\back\\slash", "x\x00y and école"]
    await store.upsert([rec(str(i), t, ts=i) for i, t in enumerate(texts)])
    for query, found in [
        ("10:30", "0"),
        ("src/app.py", "0"),
        ("O'Brien", "1"),
        ("back\\slash", "1"),
        ("x\x00y", "2"),
        ("ÉCOLE", "2"),
    ]:
        assert [h.message_id for h in await store.lexical_search(query, 3, every())] == [found]
    assert await store.lexical_search("' | !", 3, every()) == []


async def test_a_huge_message_is_stored_and_found_by_its_opening(store: PgvectorStore) -> None:
    # 40,000 distinct long words of 4-byte characters: all their terms would pass 1 MB.
    words = " ".join(f"{i:05d}" + "\U0001d400" * 50 for i in range(40_000))
    await store.upsert([rec("huge", "HUGE-1 " + words)])
    assert [h.message_id for h in await store.lexical_search("HUGE-1", 3, every())] == ["huge"]


async def test_bad_input_is_refused(store: PgvectorStore) -> None:
    with pytest.raises(TypeError):
        await store.lexical_search(b"refund", 3, every())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must"):
        await store.lexical_search("refund", -1, every())
    with pytest.raises(TypeError):
        await store.lexical_search("refund", 3, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query"):
        await store.lexical_search("\ud800 refund", 3, every())


async def test_every_scope_field_is_applied(store: PgvectorStore) -> None:
    await store.upsert(
        [
            rec("in", "ticket ZX-1 in scope", session="a", platform="web", user="u1"),
            rec("other-session", "ticket ZX-1", session="b", platform="web", user="u1"),
            rec("other-platform", "ticket ZX-1", session="a", platform="cli", user="u1"),
            rec("other-user", "ticket ZX-1", session="a", platform="web", user="u2"),
            rec("no-user", "ticket ZX-1", session="a", platform="web"),
            rec("other-role", "ticket ZX-1", session="a", platform="web", user="u1", role="tool"),
            rec("other-model", "ticket ZX-1", session="a", platform="web", user="u1", model="m2"),
        ]
    )
    where = ScopeFilter(
        model_id=M,
        session_ids=frozenset({"a"}),
        platform="web",
        user_id="u1",
        roles=frozenset({"user"}),
    )
    assert [h.message_id for h in await store.lexical_search("ZX-1", 10, where)] == ["in"]
    excluded = every(exclude_session_ids=frozenset({"a"}))
    assert [h.message_id for h in await store.lexical_search("ZX-1", 10, excluded)] == [
        "other-session"
    ]
    other = ScopeFilter(model_id="m2", session_ids=None)
    hits = await store.lexical_search("ZX-1", 10, other)
    assert [(h.message_id, h.model_id) for h in hits] == [("other-model", "m2")]
    assert await store.lexical_search("ZX-1", 10, every(roles=frozenset())) == []
    assert await store.lexical_search("ZX-1", 10, ScopeFilter(model_id=M, session_ids=[])) == []


async def test_a_large_out_of_scope_crowd_never_starves_the_scope(store: PgvectorStore) -> None:
    # 3,000 better matches elsewhere; 5 weak ones in the one session in scope.
    crowd = [
        rec(
            f"c{i}",
            f"refund request for order QQ-{i} refund refund",
            session=f"other{i % 50}",
            ts=i,
        )
        for i in range(3_000)
    ]
    mine = [
        rec(f"mine{i}", f"a long note that mentions a refund once, number {i}", session="me", ts=i)
        for i in range(5)
    ]
    await store.upsert(crowd + mine)
    where = ScopeFilter.session(M, "me")
    hits = await store.lexical_search("refund request", 5, where)
    assert sorted(h.message_id for h in hits) == [f"mine{i}" for i in range(5)]
    # The other way round: excluding the crowd's sessions by user leaves only mine.
    hits = await store.lexical_search(
        "refund", 10, every(exclude_session_ids=frozenset(f"other{i}" for i in range(50)))
    )
    assert len(hits) == 5


async def test_rewrites_deletes_and_clears_are_followed(store: PgvectorStore) -> None:
    await store.upsert(
        [
            rec("1", "the locker code is 8812", session="a", ts=1),
            rec("2", "locker number 8812 again", session="a", ts=2),
            rec("3", "locker 8812 in the other session", session="b", ts=3),
        ]
    )
    assert {h.message_id for h in await store.lexical_search("8812", 10, every())} == {
        "1",
        "2",
        "3",
    }
    # A rewrite: the old terms go, the new ones come, in the same upsert.
    await store.upsert([rec("1", "the locker code is 9034 now", session="a", ts=1)])
    assert {h.message_id for h in await store.lexical_search("8812", 10, every())} == {"2", "3"}
    assert [h.message_id for h in await store.lexical_search("9034", 10, every())] == ["1"]
    await store.delete("a", ["2"])
    assert [h.message_id for h in await store.lexical_search("8812", 10, every())] == ["3"]
    await store.delete("a", timestamps=[1])
    assert await store.lexical_search("9034", 10, every()) == []
    await store.delete("b")
    assert await store.lexical_search("locker", 10, every()) == []
    await store.upsert([rec("4", "locker again", session="c")])
    await store.delete_all()
    assert await store.lexical_search("locker", 10, every()) == []


async def test_a_version_2_table_is_indexed_by_the_migration(pg_server: TestServer) -> None:
    # A schema of version 2 (message ids, no lexical column) with messages in it.
    with fresh_schema(pg_server, "vlm") as schema:
        s = f'"{schema}"'
        store = await PgvectorStore.connect(PgvectorConfig(uri=pg_server.uri, schema=schema))
        await store.close()
        with psycopg.connect(pg_server.uri, autocommit=True) as conn:
            conn.execute(f"DROP INDEX {s}.vectors_lex")
            conn.execute(f"ALTER TABLE {s}.vectors DROP COLUMN lex")
            conn.execute(f"DROP INDEX {s}.vectors_model_ts")
            conn.execute(f"DELETE FROM {s}.aalis_migrations WHERE version >= 3")
            conn.execute(f"INSERT INTO {s}.models VALUES ('m', 2)")
            # More than one batch of the backfill.
            conn.execute(
                f"INSERT INTO {s}.vectors (message_id, session_id, ts, role, model_id, text,"
                " embedding) SELECT 'k' || lpad(i::text, 5, '0'), 's', i, 'user', 'm',"
                " 'order AX-' || lpad(i::text, 5, '0') || '-K and 王磊' || i, '[1,0]'"
                " FROM generate_series(0, 2499) AS i"
            )
            conn.execute(
                f"INSERT INTO {s}.vectors (message_id, session_id, ts, role, model_id, text,"
                " embedding) VALUES ('nul', 's', 9, 'user', 'm', %s, '[1,0]')",
                ("escaped \x01\x01 zebra",),
            )
        store = await PgvectorStore.connect(PgvectorConfig(uri=pg_server.uri, schema=schema))
        try:
            hits = await store.lexical_search("order AX-02417-K", 3, every())
            assert hits[0].message_id == "k02417"
            assert (await store.lexical_search("zebra", 3, every()))[0].text == "escaped \x00 zebra"
            assert len(await store.lexical_search("王磊", 10, every())) == 10
            async with store.pool.connection() as conn:
                cursor = await conn.execute("SELECT max(version) FROM " + s + ".aalis_migrations")
                assert (await cursor.fetchone()) == (4,)
                cursor = await conn.execute(
                    "SELECT count(*) FROM pg_indexes WHERE schemaname = %s"
                    " AND indexname = 'vectors_lex'",
                    (schema,),
                )
                assert (await cursor.fetchone()) == (1,)
        finally:
            await store.close()
