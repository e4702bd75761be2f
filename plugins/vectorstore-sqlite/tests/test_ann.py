"""The approximate index of wide scopes: exact answers, in step with every change.

Thresholds are lowered so a few thousand rows make a "large" model; the code paths are the
ones a million rows take (docs/recall.md, "Wide scopes").
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import attrs
import numpy as np
import pytest
from aalis_api_vectorstore import ScopeFilter, VectorRecord
from aalis_plugin_vectorstore_sqlite import SqliteVectorStore, _ann, _wide

pytest.importorskip("faiss")

MODEL = "m"
DIM = 32
N = 3000
PER_SESSION = 50


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_ann, "MIN_ROWS", 1000)
    monkeypatch.setattr(_ann, "EXACT_BELOW", 200)
    monkeypatch.setattr(_ann, "MIN_POOL", 16)
    return


def clustered(n: int, seed: int = 3) -> np.ndarray:
    """Sessions around a few topic centres (how embeddings of a history cluster)."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((20, DIM))
    sessions = (n + PER_SESSION - 1) // PER_SESSION
    centres = topics[rng.integers(0, 20, sessions)] + 0.7 * rng.standard_normal((sessions, DIM))
    rows = centres[np.arange(n) // PER_SESSION] + 0.6 * rng.standard_normal((n, DIM))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def record(i: int, vector: np.ndarray, *, platform: str = "web", text: str = "") -> VectorRecord:
    return VectorRecord(
        message_id=f"m{i}",
        session_id=f"s{i // PER_SESSION}",
        timestamp=1_700_000_000_000 + i,
        role="user" if i % 2 else "assistant",
        model_id=MODEL,
        text=text or f"message {i}",
        vector=vector.tolist(),
        platform=platform,
        user_id=f"u{(i // PER_SESSION) % 7}",
    )


ALL = ScopeFilter(model_id=MODEL, session_ids=None, roles=frozenset({"user", "assistant"}))


def exact(rows: dict[int, np.ndarray], query: np.ndarray, k: int, keep: set[int]) -> list[str]:
    ids = sorted(i for i in rows if i in keep)
    scores = np.array([float(rows[i] @ query) for i in ids])
    order = np.argsort(-scores, kind="stable")[:k]
    return [f"m{ids[j]}" for j in order]


async def built(path: Path, rows: np.ndarray) -> SqliteVectorStore:
    """A store holding ``rows`` whose index is built and in use."""
    store = await SqliteVectorStore(path).open()
    await store.upsert([record(i, rows[i]) for i in range(len(rows))])
    await store.search(rows[0], 5, ALL)  # starts the build in the background
    wide = engine_wide(store)
    wide.wait(60)
    return store


def engine_wide(store: SqliteVectorStore) -> _wide.WideScopes:
    engine = store._engine
    assert engine is not None
    assert engine.wide is not None
    return engine.wide


async def test_a_wide_scope_is_served_by_the_index_with_the_exact_answer(tmp_path: Path) -> None:
    rows = clustered(N)
    store = await built(tmp_path / "v.db", rows)
    try:
        wide = engine_wide(store)
        before = wide.served
        truth = {i: rows[i] for i in range(N)}
        agree = 0
        for q in range(0, N, 150):
            hits = await store.search(rows[q], 10, ALL)
            agree += len({h.message_id for h in hits} & set(exact(truth, rows[q], 10, set(truth))))
            assert len(hits) == 10
        assert wide.served - before == 20  # every one of them went through the index
        assert agree / 200 >= 0.95
        assert list(wide.folder.glob("*.npz"))  # saved beside the database
    finally:
        await store.close()


async def test_never_a_deleted_message_and_kept_in_step(tmp_path: Path) -> None:
    rows = clustered(N)
    store = await built(tmp_path / "v.db", rows)
    try:
        wide = engine_wide(store)
        first = await store.search(rows[10], 10, ALL)
        doomed = [h.message_id for h in first[:5]]
        by_session: dict[str, list[str]] = {}
        for h in first[:5]:
            by_session.setdefault(h.session_id, []).append(h.message_id)
        for session, ids in by_session.items():
            assert await store.delete(session, ids) == len(ids)
        served = wide.served
        again = await store.search(rows[10], 10, ALL)
        assert wide.served == served + 1
        assert not {h.message_id for h in again} & set(doomed)
        assert len(again) == 10
        ann = wide.indexes[MODEL]
        assert ann.size == N - 5  # removed in step, not rebuilt
        # A whole session deleted by session id.
        assert await store.delete("s3") == PER_SESSION - sum(
            1 for m in doomed if int(m[1:]) // PER_SESSION == 3
        )
        hits = await store.search(rows[3 * PER_SESSION + 1], 10, ALL)
        assert all(h.session_id != "s3" for h in hits)
        assert len(hits) == 10
    finally:
        await store.close()


async def test_a_rewritten_vector_is_found_at_its_new_place_only(tmp_path: Path) -> None:
    rows = clustered(N)
    store = await built(tmp_path / "v.db", rows)
    try:
        far = -rows[0]
        await store.upsert([record(2999, far, text="rewritten")])  # the highest id: reused
        hits = await store.search(far, 3, ALL)
        assert hits[0].message_id == "m2999"
        assert hits[0].text == "rewritten"
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        old = await store.search(rows[2999], 10, ALL)
        assert all(h.message_id != "m2999" for h in old)
        assert engine_wide(store).indexes[MODEL].size == N
    finally:
        await store.close()


async def test_clear_drops_the_index_and_its_file(tmp_path: Path) -> None:
    rows = clustered(N)
    store = await built(tmp_path / "v.db", rows)
    try:
        wide = engine_wide(store)
        assert list(wide.folder.glob("*.npz"))
        await store.delete_all()
        assert await store.search(rows[0], 10, ALL) == []
        assert not wide.indexes
        assert not list(wide.folder.glob("*.npz"))
        await store.upsert([record(i, rows[i], text="again") for i in range(N)])
        hits = await store.search(rows[5], 10, ALL)
        assert len(hits) == 10
        assert all(h.text == "again" for h in hits)
    finally:
        await store.close()


async def test_k_in_a_tiny_scope_inside_a_huge_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope the index serves (past EXACT_BELOW) whose rows all lie far from the query:
    the first probes find none of them, widening and then the exact scan must."""
    monkeypatch.setattr(_ann, "EXACT_BELOW", 5)
    rows = clustered(N)
    store = await SqliteVectorStore(tmp_path / "v.db").open()
    try:
        query = rows[0]
        far = np.argsort(rows @ query)[:100].tolist()  # > 2x the pool: the index's case
        await store.upsert(
            [record(i, rows[i], platform="tiny" if i in far else "web") for i in range(N)]
        )
        await store.search(query, 5, ALL)
        engine_wide(store).wait(60)
        where = ScopeFilter(model_id=MODEL, session_ids=None, platform="tiny")
        hits = await store.search(query, 10, where)
        assert len(hits) == 10
        assert all(h.platform == "tiny" for h in hits)
        truth = {i: rows[i] for i in far}
        assert [h.message_id for h in hits] == exact(truth, query, 10, set(far))
    finally:
        await store.close()


async def test_a_missing_stale_or_broken_file_is_rebuilt_from_the_store(tmp_path: Path) -> None:
    rows = clustered(N)
    path = tmp_path / "v.db"
    store = await built(path, rows)
    wide = engine_wide(store)
    file = wide.file_of(MODEL)
    await store.close()
    assert file.exists()
    # Stale: another writer (which never built an index) deletes a session and adds rows.
    async with SqliteVectorStore(path) as other:
        await other.delete("s0")
        await other.upsert([record(N + i, rows[i], text="newer") for i in range(5)])
    async with SqliteVectorStore(path) as store:
        await store.search(rows[1], 10, ALL)
        engine_wide(store).wait(60)
        hits = await store.search(rows[1], 10, ALL)
        assert all(h.session_id != "s0" for h in hits)
        assert {f"m{N + 1}"} <= {h.message_id for h in hits}  # the newer copy of row 1
        ann = engine_wide(store).indexes[MODEL]
        assert ann.size == N - PER_SESSION + 5
    # Broken: not an index at all.
    file.write_bytes(b"not an index")
    async with SqliteVectorStore(path) as store:
        await store.search(rows[1], 10, ALL)
        engine_wide(store).wait(60)
        hits = await store.search(rows[1], 10, ALL)
        assert len(hits) == 10
        assert engine_wide(store).indexes[MODEL].size == N - PER_SESSION + 5
    # Missing.
    file.unlink()
    async with SqliteVectorStore(path) as store:
        await store.search(rows[1], 10, ALL)
        engine_wide(store).wait(60)
        assert len(await store.search(rows[1], 10, ALL)) == 10
        assert engine_wide(store).served == 1
    assert file.exists()


CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    import test_ann as t
    from aalis_plugin_vectorstore_sqlite import SqliteVectorStore, _ann

    _ann.MIN_ROWS, _ann.EXACT_BELOW, _ann.MIN_POOL = 1000, 200, 16

    async def main():
        rows = t.clustered(t.N)
        store = await t.built(__import__("pathlib").Path(sys.argv[1]), rows)
        await store.delete("s1")
        await store.upsert([t.record(t.N, -rows[0], text="after the save")])
        print("written", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(main())
    """
)


async def test_kill_between_a_write_and_the_index_save(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", CHILD, str(path), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "written" in proc.stdout
    rows = clustered(N)
    async with SqliteVectorStore(path) as store:
        await store.search(rows[60], 10, ALL)
        wide = engine_wide(store)
        wide.wait(60)
        hits = await store.search(rows[60], 10, ALL)
        assert all(h.session_id != "s1" for h in hits)
        assert len(hits) == 10
        top = await store.search(-rows[0], 1, ALL)
        assert top[0].text == "after the save"
        assert wide.served == 2
        assert wide.indexes[MODEL].size == N - PER_SESSION + 1


def test_faiss_is_not_imported_by_the_plugin() -> None:
    code = (
        "import sys, aalis_plugin_vectorstore_sqlite as p; p.VectorstoreSqlite; "
        "from aalis_plugin_vectorstore_sqlite import _engine; "
        "print('faiss' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_writes_during_a_background_build_are_caught_up(tmp_path: Path) -> None:
    rows = clustered(N)
    store = await SqliteVectorStore(tmp_path / "v.db").open()
    try:
        await store.upsert([record(i, rows[i]) for i in range(N)])
        await store.search(rows[0], 5, ALL)  # the build starts from this snapshot
        await store.delete("s2")
        await store.upsert([record(N, -rows[7], text="during the build")])
        moved = record(4, rows[4], text="moved to another model")
        await store.upsert([attrs.evolve(moved, model_id="other")])
        wide = engine_wide(store)
        wide.wait(60)
        hits = await store.search(rows[2 * PER_SESSION + 3], 10, ALL)
        assert wide.served == 1
        assert all(h.session_id != "s2" for h in hits)
        assert all(h.message_id != "m4" for h in await store.search(rows[4], 10, ALL))
        assert (await store.search(-rows[7], 1, ALL))[0].text == "during the build"
        assert wide.indexes[MODEL].size == N - PER_SESSION + 1 - 1
    finally:
        await store.close()


def test_calibration_probes_more_cells_where_the_data_needs_it(tmp_path: Path) -> None:
    """Uniform random vectors (the hardest case) need more probes than clustered ones; the
    choice is kept in the saved file."""
    rng = np.random.default_rng(5)
    hard = rng.standard_normal((4000, DIM)).astype(np.float32)
    hard /= np.linalg.norm(hard, axis=1, keepdims=True)
    easy = clustered(4000)
    chosen = {}
    for name, rows in (("hard", hard), ("easy", easy)):
        ann = _ann.AnnIndex.train(MODEL, rows, 1)
        ann.add(np.arange(1, 4001, dtype=np.int64), rows, [("s", "user", None, None)] * 4000)
        ann.calibrate(rows)
        assert ann.probes is not None
        chosen[name] = ann.probes
    assert chosen["hard"] > chosen["easy"] >= _ann.probes_for(int(ann.index.nlist))
    wide = _wide.WideScopes(tmp_path / "v.db")
    wide.save(ann)
    loaded = wide._load(MODEL, DIM)
    assert loaded is not None
    assert loaded.probes == chosen["easy"]


def test_probe_cap_lets_a_small_index_scan_everything_and_bounds_a_large_one() -> None:
    """Calibration may probe every cell of a small index, and past a quarter of them, while
    the rows scanned stay within SCAN_BUDGET (docs/recall.md, "Wide scopes")."""
    assert _ann.SCAN_BUDGET == 150_000
    assert _ann.probe_cap(128, 20_000) == 128
    assert _ann.probe_cap(1024, 500_000) == 307
    assert _ann.probe_cap(1024, 1_000_000) == 153
    assert _ann.probe_cap(2048, 10_000_000) == _ann.probes_for(2048) == 64


async def test_an_index_file_of_the_older_format_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    rows = clustered(N)
    path = tmp_path / "v.db"
    store = await built(path, rows)
    wide = engine_wide(store)
    file = wide.file_of(MODEL)
    await store.close()
    with np.load(file) as saved:
        arrays = dict(saved)
    header = json.loads(bytes(arrays["header"]).decode())
    header["format"] = 1  # the 8-bit codes of the release before
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(file, **arrays)
    assert _wide.WideScopes(path)._load(MODEL, DIM) is None
    async with SqliteVectorStore(path) as store:
        await store.search(rows[1], 10, ALL)
        engine_wide(store).wait(60)
        assert len(await store.search(rows[1], 10, ALL)) == 10
        assert engine_wide(store).served == 1
    with np.load(file) as saved:
        assert json.loads(bytes(saved["header"]).decode())["format"] == _ann.FORMAT


async def test_the_recheck_reads_on_past_candidates_that_are_gone(tmp_path: Path) -> None:
    """The pool is re-checked in SQL best first, a few at a time: candidates that are no
    longer live rows (or out of scope) are skipped and the next ones asked for."""
    path = tmp_path / "v.db"
    async with SqliteVectorStore(path) as store:
        await store.upsert([record(i, v) for i, v in enumerate(clustered(200))])
    conn = sqlite3.connect(path)
    try:
        gone = np.arange(10**9, 10**9 + 40, dtype=np.int64)  # no such rows
        live = np.arange(1, 41, dtype=np.int64)
        keep = _wide.WideScopes._live_first(conn, np.concatenate([gone, live]), ALL, 10)
        assert keep.tolist() == list(range(40, 50))
        nowhere = ScopeFilter(model_id=MODEL, session_ids=None, platform="nowhere")
        assert len(_wide.WideScopes._live_first(conn, live, nowhere, 10)) == 0
    finally:
        conn.close()
