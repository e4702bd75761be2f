"""A large model's matrix in float16: the same answers, half the memory.

``HALF_FROM`` is lowered so a few thousand rows make a "large" model; the code paths are the
ones ten million rows take (docs/recall.md, "Ten million vectors").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aalis_api_vectorstore import ScopeFilter, VectorRecord
from aalis_plugin_vectorstore_sqlite import SqliteVectorStore, _matrix
from aalis_plugin_vectorstore_sqlite._matrix import ModelMatrix, dot

MODEL = "m"
DIM = 24
N = 3000
PER_SESSION = 50
ROLES = frozenset({"user", "assistant"})


def rows_of(n: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n // PER_SESSION + 1, DIM))
    rows = centres[np.arange(n) // PER_SESSION] + 0.8 * rng.standard_normal((n, DIM))
    return rows.astype(np.float32)


def record(i: int, vector: np.ndarray) -> VectorRecord:
    return VectorRecord(
        message_id=f"m{i}",
        session_id=f"s{i // PER_SESSION}",
        timestamp=1_700_000_000_000 + i,
        role="user" if i % 2 else "assistant",
        model_id=MODEL,
        text=f"message {i}",
        vector=vector.tolist(),
        user_id=f"u{(i // PER_SESSION) % 5}",
    )


def exact(rows: np.ndarray, query: np.ndarray, k: int, keep: list[int]) -> list[str]:
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    q = query / np.linalg.norm(query)
    scores = unit[keep] @ q
    return [f"m{keep[j]}" for j in np.argsort(-scores, kind="stable")[:k]]


def test_the_matrix_turns_float16_at_the_threshold_and_keeps_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_matrix, "HALF_FROM", 1000)
    rows = rows_of(N)
    matrix = ModelMatrix(MODEL, DIM, 1)
    matrix.append(list(range(1, 901)), rows[:900], ["user"])
    assert matrix.rows.dtype == np.float32
    kept = matrix.rows.copy()
    matrix.append(list(range(901, N + 1)), rows[900:], ["assistant"])
    assert matrix.rows.dtype == np.float16
    assert matrix.size == N
    assert np.allclose(matrix.rows[:900].astype(np.float32), kept, atol=1e-3)
    unit = rows[7] / np.linalg.norm(rows[7])
    expected = (rows / np.linalg.norm(rows, axis=1, keepdims=True)) @ unit
    assert np.abs(matrix.scores(unit) - expected).max() < 2e-3
    assert matrix.scores(unit).dtype == np.float32
    assert matrix.gather(np.array([3, 2000])).dtype == np.float32


def test_a_vector_whose_squares_overflow_float16_keeps_its_direction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A raw vector of norm 1e6 would be inf in float16 before normalising."""
    monkeypatch.setattr(_matrix, "HALF_FROM", 1)
    matrix = ModelMatrix(MODEL, 3, 1)
    matrix.append([1, 2], np.array([[1e6, 0, 0], [3e5, 4e5, 0]], dtype=np.float32), ["user"])
    assert matrix.rows.dtype == np.float16
    assert np.isfinite(matrix.rows.astype(np.float32)).all()
    assert matrix.scores(np.array([0.6, 0.8, 0.0], dtype=np.float32)) == pytest.approx(
        [0.6, 1.0], abs=1e-3
    )


def test_dot_converts_by_blocks_and_matches_float32() -> None:
    rows = rows_of(10_000)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows[1]
    half = rows.astype(np.float16)
    assert np.abs(dot(half, unit) - rows @ unit).max() < 2e-3
    assert np.array_equal(dot(rows, unit), rows @ unit)


@pytest.mark.parametrize("half", [False, True], ids=["float32", "float16"])
async def test_searches_of_a_float16_model_give_the_exact_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, half: bool
) -> None:
    if half:
        monkeypatch.setattr(_matrix, "HALF_FROM", 1000)
    rows = rows_of(N)
    store = await SqliteVectorStore(tmp_path / "v.db").open()
    try:
        await store.upsert([record(i, rows[i]) for i in range(N)])
        every = list(range(N))
        one_user = [i for i in every if (i // PER_SESSION) % 5 == 2]
        one_session = [i for i in every if i // PER_SESSION == 4]
        scopes = {
            "all": (ScopeFilter(model_id=MODEL, session_ids=None, roles=ROLES), every),
            "user": (ScopeFilter(model_id=MODEL, session_ids=None, user_id="u2"), one_user),
            "session": (ScopeFilter(model_id=MODEL, session_ids={"s4"}), one_session),
        }
        agree = total = 0
        for q in range(0, N, 300):
            for where, keep in scopes.values():
                hits = await store.search(rows[q], 10, where)
                assert len(hits) == 10
                truth = exact(rows, rows[q], 10, keep)
                assert {h.message_id for h in hits} <= {f"m{i}" for i in keep}
                agree += len({h.message_id for h in hits} & set(truth))
                total += 10
                assert hits[0].message_id == truth[0]
        # float16 may swap two near-equal neighbours at the edge of the top 10, no more.
        assert agree / total >= (0.98 if half else 1.0)
        engine = store._engine
        assert engine is not None
        held = engine.matrices[MODEL].rows.dtype
        assert held == (np.float16 if half else np.float32)
    finally:
        await store.close()


async def test_the_approximate_index_serves_a_float16_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built, calibrated and re-ranked from float16 rows (the ten-million case)."""
    pytest.importorskip("faiss")
    from aalis_plugin_vectorstore_sqlite import _ann

    monkeypatch.setattr(_matrix, "HALF_FROM", 1000)
    monkeypatch.setattr(_ann, "MIN_ROWS", 1000)
    monkeypatch.setattr(_ann, "EXACT_BELOW", 200)
    monkeypatch.setattr(_ann, "MIN_POOL", 16)
    rows = rows_of(N)
    store = await SqliteVectorStore(tmp_path / "v.db").open()
    try:
        await store.upsert([record(i, rows[i]) for i in range(N)])
        everything = ScopeFilter(model_id=MODEL, session_ids=None, roles=ROLES)
        await store.search(rows[0], 5, everything)  # starts the build
        engine = store._engine
        assert engine is not None
        assert engine.wide is not None
        engine.wide.wait(60)
        before = engine.wide.served
        agree = 0
        for q in range(0, N, 150):
            hits = await store.search(rows[q], 10, everything)
            assert len(hits) == 10
            agree += len(
                {h.message_id for h in hits} & set(exact(rows, rows[q], 10, list(range(N))))
            )
        assert engine.wide.served - before == 20
        assert engine.matrices[MODEL].rows.dtype == np.float16
        assert engine.wide.indexes[MODEL].probes is not None  # calibrated on float16 rows
        assert agree / 200 >= 0.95
    finally:
        await store.close()
