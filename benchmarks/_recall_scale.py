"""recall_speed's data and its index-level measurement at sizes the store is not loaded to.

The data set is clustered (docs/recall.md, "Speed"): topic centres, sessions around a topic,
messages around their session's centre; generated in chunks of whole sessions, each chunk
from its own seed, so ten million rows can stream to disk without ever being held at once.
"""

from __future__ import annotations

import glob
import json
import resource
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from _harness import Report, interleaved, print_table, sync
from aalis_api_vectorstore import ScopeFilter, VectorRecord

DIM = 384
PER_SESSION = 100
USERS = 20
TOPICS = 1_000
CHUNK = 100_000  # rows per generated chunk (whole sessions)
ROLES = frozenset({"user", "assistant"})
PLATFORMS = ("web", "qq", "discord", "irc")
ROOT = Path(__file__).resolve().parents[1]


def _unit_noise(rng: np.random.Generator, m: int) -> np.ndarray:
    x = rng.standard_normal((m, DIM), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def layout(n: int, seed: int = 7) -> dict[str, Any]:
    """Who owns what: each session's topic, user and platform (small: one entry a session)."""
    rng = np.random.default_rng(seed)
    sessions = (n + PER_SESSION - 1) // PER_SESSION
    user_of_session = rng.integers(0, USERS, size=sessions)
    user_of_session[0] = 0
    return {
        "n": n,
        "sessions": sessions,
        "topics": _unit_noise(rng, TOPICS),
        "topic_of_session": rng.integers(0, TOPICS, size=sessions),
        "user_of_session": user_of_session,
        "platform_of_session": rng.integers(0, len(PLATFORMS), size=sessions),
        "seed": seed,
    }


def chunks(lay: dict[str, Any]) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, unit rows)`` of every chunk, the same whatever is generated before."""
    n = lay["n"]
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        rng = np.random.default_rng([lay["seed"], lo])
        first, last = lo // PER_SESSION, (hi - 1) // PER_SESSION + 1
        centres = lay["topics"][lay["topic_of_session"][first:last]] + _unit_noise(
            rng, last - first
        )
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        rows = centres[np.arange(lo, hi) // PER_SESSION - first] + 0.75 * _unit_noise(rng, hi - lo)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        yield lo, rows


def queries(lay: dict[str, Any], rows: Any, count: int, seed: int = 11) -> np.ndarray:
    """Messages of user 0 moved away from themselves (cosine about 0.85 with the original)."""
    rng = np.random.default_rng(seed)
    owned = np.flatnonzero(lay["user_of_session"] == 0)
    picked = owned[rng.integers(0, len(owned), count)] * PER_SESSION + rng.integers(
        0, PER_SESSION, count
    )
    picked = np.minimum(picked, lay["n"] - 1)
    out = np.asarray(rows[np.sort(picked)], dtype=np.float32) + 0.6 * _unit_noise(rng, count)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def scope_filters(lay: dict[str, Any], model: str) -> dict[str, ScopeFilter]:
    """The three scopes of memory-vector's modes, on this layout."""
    mine = np.flatnonzero(lay["user_of_session"] == 0)
    return {
        "session": ScopeFilter(model_id=model, session_ids={f"s{mine[0]}"}, roles=ROLES),
        "person": ScopeFilter(model_id=model, session_ids={f"s{i}" for i in mine}, roles=ROLES),
        "all": ScopeFilter(model_id=model, session_ids=None, roles=ROLES),
    }


def scope_masks(lay: dict[str, Any]) -> dict[str, np.ndarray]:
    session_of = np.arange(lay["n"]) // PER_SESSION
    mine = np.flatnonzero(lay["user_of_session"] == 0)
    return {
        "session": session_of == mine[0],
        "person": np.isin(session_of, mine),
        "all": np.ones(lay["n"], dtype=bool),
    }


def meta(lay: dict[str, Any], lo: int, hi: int) -> list[tuple[str, str, str, str]]:
    """Each row's (session, role, platform, user), as the store's columns hold them."""
    out = []
    for i in range(lo, hi):
        s = i // PER_SESSION
        out.append(
            (
                f"s{s}",
                "user" if i % 2 == 0 else "assistant",
                PLATFORMS[lay["platform_of_session"][s]],
                f"u{lay['user_of_session'][s]}",
            )
        )
    return out


def records(
    lay: dict[str, Any], lo: int, hi: int, vectors: Any, model: str, t0: int
) -> list[VectorRecord]:
    """Rows ``lo`` to ``hi`` as the store's records (``vectors[j]`` is row ``lo + j``'s)."""
    return [
        VectorRecord(
            message_id=f"m{i}",
            session_id=session,
            timestamp=t0 + i,
            role=role,
            model_id=model,
            text=f"message {i}",
            vector=vectors[i - lo],
            platform=platform,
            user_id=user,
        )
        for i, (session, role, platform, user) in zip(range(lo, hi), meta(lay, lo, hi), strict=True)
    ]


def recall_at(found: list[set[int]], truth: list[set[int]]) -> float:
    return round(
        float(np.mean([len(f & t) / max(1, len(t)) for f, t in zip(found, truth, strict=True)])),
        4,
    )


def peak_rss_gib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


# -- the index level -------------------------------------------------------------------------


def index_search(
    ann: Any, rows: Any, unit: np.ndarray, k: int, mask: Any, in_scope: int
) -> np.ndarray:
    """The store's wide-scope search without its SQL (``_wide.WideScopes.search``): the bitmap,
    the candidates, exact re-rank against the float32 rows (a file here), widening."""
    from aalis_plugin_vectorstore_sqlite import _ann

    bits = ann.bitmap(mask)
    cells = int(ann.index.nlist)
    probes = ann.probes or _ann.probes_for(cells)
    want = max(_ann.MIN_POOL, _ann.POOL_FACTOR * k)
    while True:
        found = np.sort(ann.candidates(unit, want, bits, probes))
        scores = np.asarray(rows[found - 1], dtype=np.float32) @ unit  # id = row + 1
        top = found[np.argsort(-scores, kind="stable")[:k]]
        if len(top) >= min(k, in_scope) or probes >= cells:
            return top - 1
        probes = min(cells, probes * 4)


async def measure_index_level(report: Report, n: int, workdir: Path, quick: bool, k: int) -> None:
    """Build the approximate index of ``n`` generated rows and search it in three scopes."""
    import faiss
    from aalis_plugin_vectorstore_sqlite import _ann
    from aalis_plugin_vectorstore_sqlite._ann import AnnIndex

    lay = layout(n)
    path = workdir / f"rows{n}.npy"
    start = time.perf_counter()
    rows = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, DIM))
    for lo, chunk in chunks(lay):
        rows[lo : lo + len(chunk)] = chunk
    rows.flush()
    generated_s = time.perf_counter() - start
    faiss.omp_set_num_threads(2)  # the build may use both cores; searches use one
    start = time.perf_counter()
    ann = AnnIndex.train("bench", rows, 0)
    trained_s = time.perf_counter() - start
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        ann.add(np.arange(lo + 1, hi + 1, dtype=np.int64), rows[lo:hi], meta(lay, lo, hi))
    built_s = time.perf_counter() - start
    faiss.omp_set_num_threads(1)
    index_bytes = len(faiss.serialize_index(ann.index)) if n <= 2_000_000 else None
    report.row(
        kind="index-build",
        level="index",
        n=n,
        cells=int(ann.index.nlist),
        generate_s=round(generated_s, 1),
        train_s=round(trained_s, 1),
        build_s=round(built_s, 1),
        index_bytes=index_bytes,
        code_bytes=int(n * DIM),
        peak_rss_gib=peak_rss_gib(),
    )
    count = 5 if quick else 20
    qs = queries(lay, rows, count)
    masks = scope_masks(lay)
    filters = scope_filters(lay, "bench")
    # The exact answers: one pass over the file for every query and scope at once.
    start = time.perf_counter()
    best: dict[str, list[list[tuple[float, int]]]] = {s: [[] for _ in qs] for s in masks}
    for lo in range(0, n, CHUNK):
        scores = rows[lo : lo + CHUNK] @ qs.T
        for scope, mask in masks.items():
            part = np.where(mask[lo : lo + CHUNK, None], scores, -np.inf)
            for q in range(len(qs)):
                top = np.argpartition(-part[:, q], k)[:k]
                best[scope][q] = sorted(
                    best[scope][q] + [(float(part[t, q]), lo + int(t)) for t in top],
                    reverse=True,
                )[:k]
    exact_pass_s = time.perf_counter() - start
    report.row(
        kind="search",
        level="index",
        n=n,
        scope="all",
        contender="numpy floor (from the file, one pass for all queries)",
        median_us=round(exact_pass_s / len(qs) * 1e6, 1),
        p95_us=None,
        in_scope=n,
    )
    table = []
    for scope, mask in masks.items():
        where = filters[scope]
        sub = ann.scope_mask(where)
        in_scope = int(mask.sum())
        truth = [{i for _, i in b if np.isfinite(_)} for b in best[scope]]
        if in_scope < _ann.EXACT_BELOW:  # the store's exact path: gather the scope's rows
            idx = np.flatnonzero(mask)

            def exact_gather(q: np.ndarray, idx: np.ndarray = idx) -> np.ndarray:
                scores = np.asarray(rows[idx]) @ q
                return idx[np.argsort(-scores)[:k]]

            search = exact_gather
            name = "exact gather (store's narrow path)"
        else:

            def approx(q: np.ndarray, sub: Any = sub, in_scope: int = in_scope) -> np.ndarray:
                return index_search(ann, rows, q, k, sub, in_scope)

            search = approx
            name = "approximate index + exact re-rank"
        found = [set(search(q).tolist()) for q in qs]
        recall = recall_at(found, truth)
        in_scope_hits = min(int(mask[list(f)].sum()) for f in found)
        cycle = iter(range(10**9))
        timings = await interleaved(
            {name: sync(lambda s=search, c=cycle: s(qs[next(c) % len(qs)]))},
            rounds=3 * len(qs),
            calls_per_round=1,
            warmup=2,
        )
        stats = timings[name]
        report.row(
            kind="search",
            level="index",
            n=n,
            scope=scope,
            in_scope=in_scope,
            contender=name,
            median_us=stats["median_us"],
            p95_us=stats["p95_us"],
            recall_at_10=recall,
            hits_in_scope=in_scope_hits,
        )
        table.append([n, scope, in_scope, name, stats["median_us"] / 1000, recall, in_scope_hits])
    report.row(kind="memory", level="index", n=n, peak_rss_gib=peak_rss_gib())
    print_table(
        f"index level, {n:,} vectors (re-rank from a float32 file)",
        ["n", "scope", "in scope", "path", "median ms", "recall@10", "min hits in scope"],
        table,
    )
    path.unlink(missing_ok=True)


# -- real embeddings ----------------------------------------------------------------------------

REAL_QUERIES = 300  # held-out lines embedded as queries (the first of the shuffled lines)
REAL_CHUNK = 4_096  # rows per cached file


def real_lines(root: Path, seed: int = 5, *, stdlib: bool = True) -> list[str]:
    """Distinct lines of prose and code, shuffled: this repository's docs and sources, then the
    Python standard library's sources (real text for a real model, enough for 100 000 rows
    and more); the same on every checkout of one commit and Python release."""
    found: set[str] = set()
    sources = [(root, ("docs/**/*.md", "**/*.py"))]
    if stdlib:
        sources.append((Path(sysconfig.get_paths()["stdlib"]), ("**/*.py",)))
    for base, patterns in sources:
        for pattern in patterns:
            for name in sorted(glob.glob(str(base / pattern), recursive=True)):
                if "/.venv/" in name or "/results/" in name:
                    continue
                try:
                    text = Path(name).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                for line in text.splitlines():
                    line = line.strip().strip("#").strip()
                    if len(line) >= 40 and not line.startswith(("import ", "from ", "|")):
                        found.add(line)
    lines = sorted(found)
    rng = np.random.default_rng(seed)
    return [lines[i] for i in rng.permutation(len(lines))]


def _cached_texts(cache: Path, stdlib: bool) -> list[str]:
    """The cache's lines, written on first use (a later run reuses them as they are)."""
    cache.mkdir(parents=True, exist_ok=True)
    listing = cache / "texts.json"
    if not listing.exists():
        listing.write_text(json.dumps(real_lines(ROOT, stdlib=stdlib)), encoding="utf-8")
    texts: list[str] = json.loads(listing.read_text(encoding="utf-8"))
    return texts


def _cached(path: Path) -> np.ndarray | None:
    return np.load(path) if path.exists() else None


def _keep(path: Path, vectors: list[list[float]]) -> np.ndarray:
    rows = np.asarray(vectors, dtype=np.float32)
    tmp = path.with_name(path.stem + ".tmp.npy")
    np.save(tmp, rows)
    tmp.replace(path)
    return rows


async def real_vectors(
    n: int, cache: Path, queries: int = REAL_QUERIES, *, stdlib: bool = True
) -> tuple[np.ndarray, np.ndarray, str, float]:
    """``n`` embedded lines and the ``REAL_QUERIES`` queries, unit rows, from ``cache``
    (a folder: the lines as ``texts.json``, ``queries.npy``, ``docs_00000.npy`` ... of
    ``REAL_CHUNK`` rows each), embedding what it lacks; the model id; seconds spent embedding.
    The first ``queries`` lines are the queries (at most ``REAL_QUERIES``: the documents are
    the lines after those, whatever is asked).
    Cached lines are reused as they are, so a run months later measures the same vectors."""
    from aalis_plugin_embedding_local import LocalE5Embedder

    texts = _cached_texts(cache, stdlib)
    docs = texts[REAL_QUERIES:]
    if len(docs) < n:
        raise SystemExit(f"real embeddings: only {len(docs)} distinct lines, {n} wanted")
    embedder = LocalE5Embedder.load()
    start = time.perf_counter()
    qs = _cached(cache / "queries.npy")
    if qs is None or len(qs) < queries:
        qs = _keep(cache / "queries.npy", [await embedder.embed_query(t) for t in texts[:queries]])
    parts = []
    for c in range((n + REAL_CHUNK - 1) // REAL_CHUNK):
        part = _cached(cache / f"docs_{c:05d}.npy")
        if part is None:
            lines = docs[c * REAL_CHUNK : (c + 1) * REAL_CHUNK]
            got: list[list[float]] = []
            for lo in range(0, len(lines), 64):
                got.extend(await embedder.embed_documents(lines[lo : lo + 64]))
            part = _keep(cache / f"docs_{c:05d}.npy", got)
        parts.append(part)
    spent = time.perf_counter() - start
    rows = np.ascontiguousarray(np.concatenate(parts)[:n], dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    qs = np.asarray(qs[:queries], dtype=np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    return rows, qs, str(embedder.model_id), spent


def _sq8_before(rows: np.ndarray, cells: int) -> Any:
    """The index of the previous release (IVF, 8-bit scalar codes), for the comparison."""
    import faiss

    index = faiss.IndexIVFScalarQuantizer(
        faiss.IndexFlatIP(rows.shape[1]),
        rows.shape[1],
        cells,
        faiss.ScalarQuantizer.QT_8bit,
        faiss.METRIC_INNER_PRODUCT,
    )
    rng = np.random.default_rng(1)
    index.train(rows[np.sort(rng.choice(len(rows), min(len(rows), 48 * cells), replace=False))])
    index.add_with_ids(rows, np.arange(1, len(rows) + 1, dtype=np.int64))
    return index


async def measure_real(report: Report, n: int, quick: bool, k: int, cache: Path | None) -> None:
    """recall@10 of the index on embedding-local's vectors of real text (scope all), beside
    the previous release's 8-bit index, and the time of the index-level search."""
    import faiss
    from aalis_plugin_vectorstore_sqlite import _ann
    from aalis_plugin_vectorstore_sqlite._ann import AnnIndex

    with tempfile.TemporaryDirectory() as scratch:
        rows, qs, model, embed_s = await real_vectors(
            n, cache or Path(scratch), 5 if quick else REAL_QUERIES, stdlib=not quick
        )
    faiss.omp_set_num_threads(2)
    start = time.perf_counter()
    ann = AnnIndex.train("real", rows, 0)
    ann.add(np.arange(1, n + 1, dtype=np.int64), rows, [("s", "user", None, None)] * n)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    ann.calibrate(rows)
    calibrate_s = time.perf_counter() - start
    cells = int(ann.index.nlist)
    # The release before: sqrt(n) cells (a power of two), at most a quarter of them probed.
    before_cells = int(min(2048, max(64, 2 ** round(np.log2(max(1.0, np.sqrt(n)))))))
    before = _sq8_before(rows, before_cells)
    faiss.omp_set_num_threads(1)
    exact = qs @ rows.T
    truth = [set(np.argpartition(-row, k - 1)[:k].tolist()) for row in exact]
    bits = ann.bitmap(None)
    selector = faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits))
    pool = max(_ann.MIN_POOL, _ann.POOL_FACTOR * k)

    def ours(q: np.ndarray, probes: int) -> set[int]:
        got = ann.candidates(q, pool, bits, probes)
        return set((got[np.argsort(-(rows[got - 1] @ q))[:k]] - 1).tolist())

    def old(q: np.ndarray, probes: int) -> set[int]:
        params: Any = faiss.SearchParametersIVF()
        params.sel, params.nprobe = selector, probes
        got = before.search(q.reshape(1, -1), 64, params=params)[1][0]
        got = got[got >= 0]
        return set((got[np.argsort(-(rows[got - 1] @ q))[:k]] - 1).tolist())

    table = []
    steps = {2**i for i in range(int(np.log2(cells)) + 1)} | {ann.probes or 1}
    runs = [(p, f"1-bit RaBitQ, pool {pool}", ours, cells) for p in sorted(steps)]
    runs += [
        (2**i, "8-bit SQ, pool 64 (before)", old, before_cells)
        for i in range(int(np.log2(before_cells)) + 1)
    ]
    for probes, name, search, cells_of in runs:
        found, times = [], []
        for q in qs:
            t = time.perf_counter()
            found.append(search(q, probes))
            times.append(time.perf_counter() - t)
        recall = recall_at(found, truth)
        median_us = round(float(np.median(times)) * 1e6, 1)
        report.row(
            kind="real-recall",
            level="index",
            n=n,
            model=model,
            cells=cells_of,
            index=name,
            probes=probes,
            calibrated=probes == ann.probes and name.startswith("1-bit"),
            queries=len(qs),
            recall_at_10=recall,
            median_us=median_us,
        )
        table.append([n, cells_of, probes, name, recall, median_us / 1000])
    report.row(
        kind="real-build",
        level="index",
        n=n,
        model=model,
        cells=cells,
        calibrated_probes=ann.probes,
        probe_cap=_ann.probe_cap(cells, n),
        embed_s=round(embed_s, 1),
        build_s=round(build_s, 1),
        calibrate_s=round(calibrate_s, 1),
        index_bytes=len(faiss.serialize_index(ann.index)),
        before_bytes=len(faiss.serialize_index(before)),
    )
    print_table(
        f"real embeddings, {n:,} lines, scope all (calibrated: {ann.probes} of {cells} cells)",
        ["n", "cells", "probes", "index", "recall@10", "median ms"],
        table,
    )
