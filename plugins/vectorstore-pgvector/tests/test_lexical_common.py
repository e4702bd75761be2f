"""Common words in the lexical leg (docs/backends/postgres.md, "Lexical search"): a seed term
held by more than ``common_rows`` rows picks no candidates while rarer terms do, and a query
of common words alone ranks only the newest ``window`` matches in scope, so a word in every
message no longer makes a query linear in the scope. The thresholds are lowered here so a
small table shows the rule; the kit runs with the real ones and its results are unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aalis_api_vectorstore import ScopeFilter
from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore
from aalis_test_support.postgres import TestServer, fresh_schema

from .test_lexical import M, rec


def scope(*sessions: str) -> ScopeFilter:
    return ScopeFilter(model_id=M, session_ids=frozenset(sessions) if sessions else None)


@pytest_asyncio.fixture
async def store(pg_server: TestServer) -> AsyncIterator[PgvectorStore]:
    with fresh_schema(pg_server, "vc") as schema:
        s = await PgvectorStore.connect(
            PgvectorConfig(uri=pg_server.uri, schema=schema, max_pool_size=2)
        )
        try:
            # 40 orders in session "a" (the newest are long: BM25 prefers the short old ones),
            # 40 in session "b", every one holding "order" and "refund".
            records = [
                rec(
                    f"a{i}",
                    f"refund for order AX-{i:05d}-K"
                    + (
                        " was asked about again today by the customer on the phone"
                        if i >= 37
                        else ""
                    ),
                    session="a",
                    ts=i,
                )
                for i in range(40)
            ] + [
                rec(f"b{i}", f"order refund BX-{i:05d}-Q", session="b", ts=100 + i)
                for i in range(40)
            ]
            await s.upsert(records)
            yield s
        finally:
            await s.close()


async def test_a_rare_term_decides_and_the_common_ones_only_fill_up(store: PgvectorStore) -> None:
    before = await store.lexical_search("refund for order AX-00007-K", 3, scope("a"))
    store.common_rows = 10  # "order", "refund", "for" are now common; "ax-00007-k" is not
    after = await store.lexical_search("refund for order AX-00007-K", 3, scope("a"))
    assert before[0].message_id == after[0].message_id == "a7"
    assert len(after) == 3
    assert {h.session_id for h in after} == {"a"}
    assert after[0].score > after[1].score > after[2].score > 0
    assert len({h.message_id for h in after}) == 3


async def test_common_words_alone_rank_only_the_newest_matches_in_scope(
    store: PgvectorStore,
) -> None:
    store.common_rows = 10
    store.window = 3
    hits = await store.lexical_search("order refund", 2, scope("a"))
    # the three newest in scope are a37..a39: long texts that BM25 over every match ranks last
    assert {h.message_id for h in hits} <= {"a37", "a38", "a39"}
    assert len(hits) == 2
    # k hits whenever k exist, however small the window
    assert len(await store.lexical_search("order refund", 5, scope("a"))) == 5


async def test_without_common_terms_nothing_changes(store: PgvectorStore) -> None:
    for query in ("AX-00012-K", "refund BX-00003-Q", "order AX-00039-K customer"):
        wide = await store.lexical_search(query, 5, scope())
        store.common_rows = 10**6
        assert await store.lexical_search(query, 5, scope()) == wide
        store.common_rows = PgvectorStore.common_rows
