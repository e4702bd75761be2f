"""The RAM matrix follows the store's own deletes and replacements without a reload.

After every write the matrix must equal one freshly loaded from the table (ids, rows,
version): the property the searches rely on. A delete used to drop the matrix, so the next
search re-read the whole model (minutes at ten million rows: docs/recall.md, "Ten million
vectors").
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from aalis_api_vectorstore import ScopeFilter, VectorRecord
from aalis_plugin_vectorstore_sqlite import SqliteVectorStore, _matrix
from aalis_plugin_vectorstore_sqlite._engine import Engine
from aalis_plugin_vectorstore_sqlite._matrix import ModelMatrix

DIM = 8
EVERYTHING = ScopeFilter(model_id="m", session_ids=None)


def vector(seed: object) -> np.ndarray:
    return np.random.default_rng(abs(hash(str(seed))) % 2**32).standard_normal(DIM)


def record(i: int, *, model: str = "m", seed: object = None) -> VectorRecord:
    return VectorRecord(
        message_id=f"m{i}",
        session_id=f"s{i % 7}",
        timestamp=1_700_000_000_000 + i,
        role="user",
        model_id=model,
        text=f"message {i}",
        vector=vector(i if seed is None else seed).tolist(),
    )


def engine_of(store: SqliteVectorStore) -> Engine:
    engine = store._engine
    assert engine is not None
    return engine


def assert_current(engine: Engine, model: str = "m") -> ModelMatrix:
    """The held matrix equals one freshly loaded (on a connection of this thread)."""
    held = engine.matrices[model]
    conn = sqlite3.connect(engine.path)
    try:
        dim, version = conn.execute(
            "SELECT dim, version FROM models WHERE model_id = ?", (model,)
        ).fetchone()
        fresh = ModelMatrix.load(conn, model, dim, version)
    finally:
        conn.close()
    assert held.version == version
    assert np.array_equal(held.ids, fresh.ids)
    assert np.allclose(held.rows.astype(np.float32), fresh.rows.astype(np.float32), atol=1e-3)
    return held


async def test_a_delete_is_applied_to_the_matrix_in_place(tmp_path: Path) -> None:
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        await store.upsert([record(i) for i in range(40)])
        await store.search(vector(3), 5, EVERYTHING)  # loads the matrix
        engine = engine_of(store)
        held = engine.matrices["m"]
        assert await store.delete("s3", ["m3", "m10"]) == 2
        assert engine.matrices["m"] is held  # not dropped
        assert_current(engine)
        hits = await store.search(vector(3), 40, EVERYTHING)
        assert {h.message_id for h in hits} == {f"m{i}" for i in range(40)} - {"m3", "m10"}
        assert await store.delete("s5") == 5  # a whole session: 5, 12, 19, 26, 33
        assert engine.matrices["m"] is held
        assert_current(engine)


async def test_a_replacement_moves_the_row_and_may_change_its_model(tmp_path: Path) -> None:
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        await store.upsert([record(i) for i in range(30)])
        await store.upsert([record(i, model="other") for i in range(30, 35)])
        await store.search(vector(1), 5, EVERYTHING)
        await store.search(vector(1), 5, ScopeFilter(model_id="other", session_ids=None))
        engine = engine_of(store)
        held = engine.matrices["m"]
        await store.upsert([record(29, seed="new"), record(4, seed="new 4")])  # highest id too
        await store.upsert([record(6, model="other")])  # moves between models
        assert engine.matrices["m"] is held
        assert_current(engine)
        assert_current(engine, "other")
        top = await store.search(vector("new"), 1, EVERYTHING)
        assert top[0].message_id == "m29"
        assert top[0].score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("half", [False, True], ids=["float32", "float16"])
async def test_any_series_of_writes_leaves_the_matrix_as_a_reload_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, half: bool
) -> None:
    if half:
        monkeypatch.setattr(_matrix, "HALF_FROM", 50)
    rng = random.Random(7)
    async with SqliteVectorStore(tmp_path / "v.db") as store:
        await store.upsert([record(i) for i in range(120)])
        await store.search(vector(0), 3, EVERYTHING)
        engine = engine_of(store)
        held = engine.matrices["m"]
        live = set(range(120))
        for step in range(60):
            action = rng.choice(["delete", "session", "replace", "add"])
            if action == "delete" and live:
                doomed = rng.sample(sorted(live), min(len(live), rng.randint(1, 5)))
                for i in doomed:
                    assert await store.delete(f"s{i % 7}", [f"m{i}"]) == 1
                live -= set(doomed)
            elif action == "session":
                session = rng.randrange(7)
                gone = {i for i in live if i % 7 == session}
                assert await store.delete(f"s{session}") == len(gone)
                live -= gone
            elif action == "replace" and live:
                picked = rng.sample(sorted(live), min(len(live), 3))
                await store.upsert([record(i, seed=f"r{step}.{i}") for i in picked])
            else:
                new = range(1000 + 10 * step, 1000 + 10 * step + 4)
                await store.upsert([record(i) for i in new])
                live |= set(new)
            if not live:
                break
            assert engine.matrices["m"] is held  # this store's writes never drop it
            assert_current(engine)
            hits = await store.search(vector(0), len(live), EVERYTHING)
            assert {h.message_id for h in hits} == {f"m{i}" for i in live}
