"""``ModelMatrix``: one model's vectors in RAM, unit-normalised float32, ordered by row id.

Exact cosine top-k over float32 rows in numpy is the whole search (there is no index to be
approximate), so what matters is never re-reading the table: the matrix is built once per
model and kept until a write changes that model. Staleness is decided by the model's
``version`` column, which every write bumps in its own transaction, so a write by another
process invalidates this process's matrix too. Writes by this store that only add rows are
appended in place (amortised growth) instead of rebuilding, which keeps a chat that indexes a
turn and then recalls from paying a full reload each turn.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]

#: Rows fetched per round trip while building (bounds the temporary bytes held at once).
_CHUNK = 16_384


def normalise(rows: FloatMatrix) -> FloatMatrix:
    """Rows scaled to unit length in place; all-zero rows stay zero (cosine 0 with anything)."""
    norms = np.linalg.norm(rows, axis=1)
    norms[norms == 0.0] = 1.0
    rows /= norms[:, None]
    return rows


def decode(blobs: list[bytes], dim: int) -> FloatMatrix:
    """Stored little-endian float32 blobs as an (n, dim) matrix (a fresh, writable copy)."""
    if not blobs:
        return np.empty((0, dim), dtype=np.float32)
    flat = np.frombuffer(b"".join(blobs), dtype="<f4").astype(np.float32, copy=True)
    return flat.reshape(len(blobs), dim)


class ModelMatrix:
    """The unit rows of one model and their row ids (ascending), with spare capacity."""

    __slots__ = ("_buffer", "_ids", "dim", "model_id", "roles", "size", "version")

    def __init__(self, model_id: str, dim: int, version: int) -> None:
        self.model_id = model_id
        self.dim = dim
        self.version = version
        self.size = 0
        #: Every role the model's rows hold: a search's role filter that admits all of them
        #: filters nothing, and the engine then skips reading the ids in scope from SQL.
        self.roles: set[str] = set()
        self._buffer: FloatMatrix = np.empty((0, dim), dtype=np.float32)
        self._ids: IdArray = np.empty(0, dtype=np.int64)

    @property
    def rows(self) -> FloatMatrix:
        return self._buffer[: self.size]

    @property
    def ids(self) -> IdArray:
        return self._ids[: self.size]

    @classmethod
    def load(
        cls, conn: sqlite3.Connection, model_id: str, dim: int, count: int, version: int
    ) -> ModelMatrix:
        """Read every vector of the model (inside the caller's read transaction)."""
        matrix = cls(model_id, dim, version)
        matrix._reserve(count)
        cursor = conn.execute(
            "SELECT id, vector, role FROM vectors WHERE model_id = ? ORDER BY id", (model_id,)
        )
        while True:
            chunk = cursor.fetchmany(_CHUNK)
            if not chunk:
                break
            matrix._put([row[0] for row in chunk], decode([row[1] for row in chunk], dim))
            matrix.roles.update(row[2] for row in chunk)
        return matrix

    def append(self, ids: list[int], raw: FloatMatrix, roles: list[str]) -> None:
        """Add rows whose ids are all greater than every id held (new inserts), with their
        roles."""
        if not ids:
            return
        if self.size and ids[0] <= int(self._ids[self.size - 1]):
            raise ValueError("appended ids must be ascending past the held ones")
        self._put(ids, raw)
        self.roles.update(roles)

    def _put(self, ids: list[int], rows: FloatMatrix) -> None:
        start, end = self.size, self.size + len(ids)
        self._reserve(end)
        self._buffer[start:end] = rows
        normalise(self._buffer[start:end])
        self._ids[start:end] = ids
        self.size = end

    def _reserve(self, needed: int) -> None:
        capacity = len(self._ids)
        if needed <= capacity:
            return
        new_capacity = max(needed, int(capacity * 1.5) + 64)
        buffer = np.empty((new_capacity, self.dim), dtype=np.float32)
        buffer[: self.size] = self._buffer[: self.size]
        ids = np.empty(new_capacity, dtype=np.int64)
        ids[: self.size] = self._ids[: self.size]
        self._buffer, self._ids = buffer, ids

    def positions(self, ids: IdArray) -> npt.NDArray[np.intp] | None:
        """Row positions of ``ids`` (sorted or not), or None when one is not held (stale)."""
        held = self.ids
        if len(ids) == 0:
            return np.empty(0, dtype=np.intp)
        pos = np.searchsorted(held, ids)
        if int(pos.max()) >= len(held) or not np.array_equal(held[pos], ids):
            return None
        return pos


def top_k(scores: npt.NDArray[np.floating[Any]], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` highest scores, best first (all of them when fewer)."""
    n = len(scores)
    if k >= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(scores, n - k)[n - k :]
    return part[np.argsort(-scores[part], kind="stable")]


__all__ = ["FloatMatrix", "IdArray", "ModelMatrix", "decode", "normalise", "top_k"]
