"""The search uses its model's HNSW index and iterative scan keeps ``k`` in a narrow scope.

Checked on the plan (EXPLAIN), not with a stopwatch: a filtered search of one model is an index
scan on that model's partial HNSW index, never a sequential scan that sorts every vector; and
with a filter that leaves a few per cent of the rows in scope, the answer still has ``k`` hits.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from aalis_api_vectorstore import ScopeFilter, VectorRecord
from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore
from aalis_plugin_vectorstore_pgvector._codec import vector_literal
from aalis_plugin_vectorstore_pgvector._schema import index_name
from aalis_test_support.postgres import TestServer, fresh_schema

N = 4_000


@pytest_asyncio.fixture
async def filled(pg_server: TestServer) -> AsyncIterator[PgvectorStore]:
    with fresh_schema(pg_server, "vp") as schema:
        store = await PgvectorStore.connect(PgvectorConfig(uri=pg_server.uri, schema=schema))
        try:
            rng = random.Random(3)
            records = [
                VectorRecord(
                    message_id=f"m{i}",
                    session_id=f"s{i % 200}",
                    timestamp=i,
                    role="user",
                    model_id=("small", "wide")[i % 2],
                    text=f"t{i}",
                    vector=[rng.gauss(0, 1) for _ in range((8, 16)[i % 2])],
                    platform=("web", "cli")[i % 4 // 2],
                )
                for i in range(N)
            ]
            await store.upsert(records)
            async with store.pool.connection() as conn:
                await conn.execute(f'ANALYZE "{schema}".vectors')
            yield store
        finally:
            await store.close()


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = [plan]
    for child in plan.get("Plans", []):
        out.extend(_nodes(child))
    return out


async def test_a_search_scans_its_models_hnsw_index(filled: PgvectorStore) -> None:
    q = vector_literal([0.5] * 16)
    text = filled.search_sql(16, "model_id = 'wide' AND platform = %(platform)s", exact=False)
    async with filled.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor = await conn.execute(
            f"EXPLAIN (FORMAT JSON) {text}", {"q": q, "k": 10, "platform": "cli"}
        )
        row = await cursor.fetchone()
    assert row is not None
    document = row[0] if not isinstance(row[0], str) else json.loads(row[0])
    nodes = _nodes(document[0]["Plan"])
    scans = [n for n in nodes if "Scan" in n["Node Type"] and n["Node Type"] != "Subquery Scan"]
    assert [n.get("Index Name") for n in scans] == [index_name("wide")], scans
    assert all(n["Node Type"] != "Seq Scan" for n in nodes)


async def test_a_narrow_scope_still_gets_k_hits(filled: PgvectorStore) -> None:
    # Two sessions of 200, one model: 10 vectors in scope of 4,000.
    where = ScopeFilter(model_id="wide", session_ids=frozenset({"s1", "s3"}))
    hits = await filled.search([0.5] * 16, 10, where)
    assert len(hits) == 10
    assert {h.session_id for h in hits} <= {"s1", "s3"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


async def test_a_bulk_load_without_the_index_searches_the_same_and_rebuilds_it(
    filled: PgvectorStore,
) -> None:
    where = ScopeFilter(model_id="wide", session_ids=None, platform="cli")
    query = [0.25] * 16
    before = [h.key for h in await filled.search(query, 5, where)]
    await filled.drop_index("wide")
    # Without the index every search is exact: the approximate answer had the same top 5 here.
    assert [h.key for h in await filled.search(query, 5, where)] == before
    await filled.build_index("wide")
    async with filled.pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s", (filled.schema,)
        )
        names = {row[0] for row in await cursor.fetchall()}
    assert index_name("wide") in names
    assert [h.key for h in await filled.search(query, 5, where)] == before


async def test_a_wide_lexical_search_finds_its_candidates_through_the_gin_index(
    filled: PgvectorStore,
) -> None:
    text = filled.lexical_sql("model_id = 'wide'", 1)
    params = {"k": 10, "seeds": "'t77'", "t0": "'t77'", "w0": 4.0}
    async with filled.pool.connection() as conn:
        cursor = await conn.execute(f"EXPLAIN (FORMAT JSON) {text}", params)
        row = await cursor.fetchone()
    assert row is not None
    document = row[0] if not isinstance(row[0], str) else json.loads(row[0])
    nodes = _nodes(document[0]["Plan"])
    assert "vectors_lex" in {n.get("Index Name") for n in nodes}, nodes
    assert all(n["Node Type"] != "Seq Scan" for n in nodes)
