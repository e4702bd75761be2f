"""recall_speed at sizes whose rows do not fit twice in RAM: through the store, streamed.

``--store-sizes 10000000`` loads the clustered rows (``_recall_scale``) through the store's
own API, one generated chunk at a time, so the run never holds the rows itself: the only
copy in RAM is the store's matrix (float16 past ``HALF_FROM`` rows) and its approximate
index. The exact answers are computed by generating the chunks again. What is reported
(docs/recall.md, "Ten million vectors"): load and build times, the API's p50/p95 in the
three scopes with recall@10 against exact and the hits in scope, the exact scan of the same
store (its index switched off) for scale, and the process's peak RSS after each phase.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import numpy as np
from _harness import Report, interleaved, print_table
from _recall_scale import (
    CHUNK,
    DIM,
    PER_SESSION,
    _unit_noise,
    chunks,
    layout,
    peak_rss_gib,
    recall_at,
    records as records_of,
    scope_filters,
    scope_masks,
)

MODEL = "bench-store"
T0 = 1_700_000_000_000
BATCH = 20_000


def streamed_queries(lay: dict[str, Any], count: int, seed: int = 11) -> np.ndarray:
    """``_recall_scale.queries`` without the rows in RAM: the picked rows are taken from the
    generated chunks as they stream by (same picks, same noise)."""
    rng = np.random.default_rng(seed)
    owned = np.flatnonzero(lay["user_of_session"] == 0)
    picked = owned[rng.integers(0, len(owned), count)] * PER_SESSION + rng.integers(
        0, PER_SESSION, count
    )
    picked = np.sort(np.minimum(picked, lay["n"] - 1))
    base = np.empty((count, DIM), dtype=np.float32)
    for lo, chunk in chunks(lay):
        inside = (picked >= lo) & (picked < lo + len(chunk))
        base[inside] = chunk[picked[inside] - lo]
    out = base + 0.6 * _unit_noise(rng, count)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def exact_top(lay: dict[str, Any], qs: np.ndarray, k: int) -> dict[str, list[set[int]]]:
    """Every scope's exact top ``k`` row numbers for each query: one pass over the chunks."""
    masks = scope_masks(lay)
    best: dict[str, list[list[tuple[float, int]]]] = {s: [[] for _ in qs] for s in masks}
    for lo, chunk in chunks(lay):
        scores = chunk @ qs.T
        for scope, mask in masks.items():
            part = np.where(mask[lo : lo + len(chunk), None], scores, -np.inf)
            for q in range(len(qs)):
                top = np.argpartition(-part[:, q], k)[:k]
                merged = best[scope][q] + [(float(part[t, q]), lo + int(t)) for t in top]
                best[scope][q] = sorted(merged, reverse=True)[:k]
    return {s: [{i for v, i in b if np.isfinite(v)} for b in rows] for s, rows in best.items()}


async def load(store: Any, lay: dict[str, Any]) -> float:
    start = time.perf_counter()
    for lo, chunk in chunks(lay):
        for at in range(0, len(chunk), BATCH):
            first, last = lo + at, lo + min(at + BATCH, len(chunk))
            records = records_of(lay, first, last, chunk[at : at + BATCH], MODEL, T0)
            await store.upsert(records)
        if lo and lo % (10 * CHUNK) == 0:
            done = lo + len(chunk)
            secs = time.perf_counter() - start
            print(f"  loaded {done:,} in {secs:.0f} s ({done / secs:,.0f}/s)", flush=True)
    return time.perf_counter() - start


async def measure_store_streamed(
    report: Report, n: int, workdir: Path, quick: bool, k: int
) -> bool:
    """Load ``n`` rows through the store, build its index, search three scopes."""
    from aalis_plugin_vectorstore_sqlite import SqliteVectorStore

    lay = layout(n)
    path = workdir / f"store{n}.db"
    store = await SqliteVectorStore(path).open()
    ok = True
    try:
        load_s = await load(store, lay)
        report.row(
            kind="load",
            level="store, streamed",
            contender="vectorstore-sqlite",
            n=n,
            seconds=round(load_s, 1),
            vectors_per_s=round(n / load_s),
            db_bytes=path.stat().st_size,
            peak_rss_gib=peak_rss_gib(),
        )
        count = 5 if quick else 10
        qs = streamed_queries(lay, count)
        filters = scope_filters(lay, MODEL)
        engine = store._engine
        assert engine is not None
        start = time.perf_counter()
        await store.search(qs[0], k, filters["session"])  # the matrix, loaded once
        matrix_s = time.perf_counter() - start
        held = engine.matrices[MODEL].rows
        start = time.perf_counter()
        await store.search(qs[0], k, filters["all"])  # starts the index build
        wide = engine.wide
        if wide is not None:
            await asyncio.to_thread(wide.wait)
        build_s = time.perf_counter() - start
        index_file = wide.file_of(MODEL) if wide is not None else None
        report.row(
            kind="index-build",
            level="store, streamed",
            n=n,
            matrix_load_s=round(matrix_s, 1),
            matrix_dtype=str(held.dtype),
            matrix_bytes=int(held.nbytes),
            build_s=round(build_s, 1),
            file_bytes=index_file.stat().st_size if index_file and index_file.exists() else None,
            peak_rss_gib=peak_rss_gib(),
        )
        start = time.perf_counter()
        truth = exact_top(lay, qs, k)
        exact_pass_s = time.perf_counter() - start
        masks = scope_masks(lay)
        table = []
        for scope, where in filters.items():
            mask = masks[scope]
            in_scope = int(mask.sum())
            found: list[set[int]] = []
            in_scope_hits = k
            served_before = wide.served if wide is not None else 0
            for q in qs:
                hits = await store.search(q, k, where)
                got = {h.timestamp - T0 for h in hits}
                found.append(got)
                in_scope_hits = min(in_scope_hits, sum(bool(mask[i]) for i in got))
                if len(hits) != min(k, in_scope) or not all(mask[i] for i in got):
                    report.note(f"FAIL: {n:,} {scope}: {len(hits)} hits, not all in scope")
                    ok = False
            path_name = (
                "approximate index"
                if wide is not None and wide.served > served_before
                else "exact scan"
            )
            recall = recall_at(found, truth[scope])
            cycle = iter(range(10**9))

            def api(where: Any = where, cycle: Any = cycle) -> Any:
                return store.search(qs[next(cycle) % len(qs)], k, where)

            timings = await interleaved(
                {"vectorstore-sqlite": api}, rounds=3 * len(qs), calls_per_round=1, warmup=2
            )
            stats = timings["vectorstore-sqlite"]
            exact_stats: dict[str, Any] | None = None
            if path_name == "approximate index":
                # The same store with its index switched off: the exact scan it replaces.
                engine.approximate = False
                try:
                    exact = await interleaved(
                        {"exact": api}, rounds=min(5, len(qs)), calls_per_round=1, warmup=1
                    )
                finally:
                    engine.approximate = True
                exact_stats = exact["exact"]
            if recall < 0.95:
                report.note(f"FAIL: {n:,} {scope}: recall@10 {recall} < 0.95")
                ok = False
            report.row(
                kind="search",
                level="store, streamed",
                n=n,
                scope=scope,
                in_scope=in_scope,
                contender="vectorstore-sqlite",
                path=path_name,
                median_us=stats["median_us"],
                p95_us=stats["p95_us"],
                exact_scan_median_us=exact_stats["median_us"] if exact_stats else None,
                recall_at_10=recall,
                hits_in_scope=in_scope_hits,
            )
            table.append(
                [
                    n,
                    scope,
                    in_scope,
                    path_name,
                    stats["median_us"] / 1000,
                    stats["p95_us"] / 1000,
                    exact_stats["median_us"] / 1000 if exact_stats else "-",
                    recall,
                ]
            )
        report.row(
            kind="memory",
            level="store, streamed",
            n=n,
            peak_rss_gib=peak_rss_gib(),
            exact_pass_s=round(exact_pass_s, 1),
        )
        print_table(
            f"through the store, {n:,} vectors loaded by streaming, k={k}",
            ["n", "scope", "in scope", "path", "p50 ms", "p95 ms", "exact ms", "recall@10"],
            table,
        )
    finally:
        await store.close()  # its files go with the run's scratch directory
    return ok
