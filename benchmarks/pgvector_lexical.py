"""vectorstore-pgvector's lexical leg over 100,000 messages where some words are in every one.

The lexical search scores every candidate (every row in scope holding a seed term), so a word
held by every message made a query linear in the scope. Now a seed term held by more than
``common_rows`` (2,000) rows in scope picks no candidates while rarer terms do, and a query of common
words alone ranks only the newest ``window`` (2,000) matches in scope
(docs/backends/postgres.md, "Lexical search"). This runs both, interleaved, on the same schema:

* ``before``: every seed term picks candidates (the store's term split bypassed);
* ``after``: the store as it is.

History: 100,000 messages (``--quick``: 5,000) in 1,000 sessions of 50 people, every one holding
"order" and "refund" (plus "customer", "placed"), each an order number of its own; one in 500
also names a parcel. Queries: common words only, a rare identifier among common words, a rare
word. Scopes: one session, one person (20 sessions), all. Reported: p50 and p95 per query and
scope, and whether the first hit (and the top 10) agree.

One PostgreSQL: ``$AALIS_TEST_POSTGRES_URI`` when set, else the pinned embedded server.
Run: ``.venv/bin/python benchmarks/pgvector_lexical.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, interleaved, parse_args, print_table, run

NAME = "pgvector_lexical"
MODEL = "bench"
QUERIES = {
    "common words only": "order refund",
    "identifier among common words": "refund for order AX-00042-K",
    "rare word": "parcel SF1402900500",
}


def _text(i: int) -> str:
    text = f"refund for order AX-{i:05d}-K placed by customer {i % 50} on day {i % 365}"
    if i % 500 == 0:
        text += f", parcel SF14029{i:05d} is at the depot"
    return text


async def _load(store: Any, uri: str, schema: str, n: int) -> float:
    import psycopg
    from aalis_api_vectorstore import VectorRecord

    started = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        batch: list[VectorRecord] = []
        first = True
        for i in range(n):
            session = i % 1000
            batch.append(
                VectorRecord(
                    message_id=f"m{i}",
                    session_id=f"s{session}",
                    timestamp=i,
                    role="user",
                    model_id=MODEL,
                    text=_text(i),
                    vector=[1.0, float(i % 7)],
                    user_id=f"u{session % 50}",
                )
            )
            if len(batch) == 5_000:
                await store.upsert(batch)
                batch = []
                if first:
                    # Bulk load: the indexes are built once at the end.
                    await store.drop_index(MODEL)
                    await conn.execute(f'DROP INDEX "{schema}".vectors_lex')
                    first = False
        if batch:
            await store.upsert(batch)
        if not first:
            await conn.execute(
                f'CREATE INDEX vectors_lex ON "{schema}".vectors USING gin (lex)'
                " WITH (fastupdate = off)"
            )
        await conn.execute(f'VACUUM ANALYZE "{schema}".vectors')
    return time.perf_counter() - started


async def measure(args: argparse.Namespace, report: Report, uri: str) -> None:
    from aalis_api_vectorstore import ScopeFilter
    from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore

    n = 5_000 if args.quick else 100_000
    schema = f"bench_lex_{uuid.uuid4().hex[:8]}"
    store = await PgvectorStore.connect(PgvectorConfig(uri=uri, schema=schema))
    # The same store with its term split bypassed: every seed term picks candidates.
    before = await PgvectorStore.connect(PgvectorConfig(uri=uri, schema=schema))

    async def every_seed(conn: Any, seeds: list[str], *_: Any) -> tuple[list[str], list[str]]:
        return seeds, []

    before._split_common = every_seed  # type: ignore[method-assign]
    try:
        report.note(f"{n:,} messages loaded in {await _load(store, uri, schema, n):.1f} s")
        roles = frozenset({"user"})
        scopes = {
            "one session": ScopeFilter(model_id=MODEL, session_ids=frozenset({"s7"}), roles=roles),
            "one person": ScopeFilter(
                model_id=MODEL,
                session_ids=frozenset(f"s{j}" for j in range(1000) if j % 50 == 7),
                roles=roles,
            ),
            "all": ScopeFilter(model_id=MODEL, session_ids=None, roles=roles),
        }
        rows = []
        for scope_name, where in scopes.items():
            for query_name, query in QUERIES.items():
                old = await before.lexical_search(query, 10, where)
                new = await store.lexical_search(query, 10, where)
                same_first = bool(old) == bool(new) and (
                    not old or old[0].message_id == new[0].message_id
                )
                overlap = len({h.message_id for h in old} & {h.message_id for h in new})

                async def call_before(q: str = query, w: Any = where) -> None:
                    await before.lexical_search(q, 10, w)

                async def call_after(q: str = query, w: Any = where) -> None:
                    await store.lexical_search(q, 10, w)

                stats = await interleaved(
                    {"before": call_before, "after": call_after},
                    rounds=5 if args.quick else 10,
                    calls_per_round=2,
                    warmup=1,
                )
                b, a = stats["before"], stats["after"]
                report.row(
                    scope=scope_name,
                    query=query_name,
                    text=query,
                    before=b,
                    after=a,
                    same_first_hit=same_first,
                    top10_overlap=overlap,
                    hits_before=len(old),
                    hits_after=len(new),
                )
                rows.append(
                    [
                        scope_name,
                        query_name,
                        round(b["median_us"] / 1000, 1),
                        round(b["p95_us"] / 1000, 1),
                        round(a["median_us"] / 1000, 1),
                        round(a["p95_us"] / 1000, 1),
                        same_first,
                        f"{overlap}/10",
                    ]
                )
        print_table(
            f"lexical_search over {n:,} messages, k=10 (ms)",
            [
                "scope",
                "query",
                "before p50",
                "before p95",
                "after p50",
                "after p95",
                "same first hit",
                "top-10 shared",
            ],
            rows,
        )
    finally:
        await before.close()
        await store.close()


async def main(args: argparse.Namespace) -> None:
    from aalis_test_support.postgres import postgres_server

    report = Report(NAME, args, {"k": 10, "common_rows": 2000, "window": 2000})
    with postgres_server() as server:
        report.set_server(await asyncio.to_thread(server.describe))
        await measure(args, report, server.uri)
    report.finish()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
