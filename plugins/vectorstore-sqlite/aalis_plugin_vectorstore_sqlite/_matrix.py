"""``ModelMatrix``: one model's vectors in RAM, unit-normalised, ordered by row id.

Exact cosine top-k over float32 rows in numpy is the whole search (there is no index to be
approximate), so what matters is never re-reading the table: the matrix is built once per
model and kept until a write changes that model. Staleness is decided by the model's
``version`` column, which every write bumps in its own transaction, so a write by another
process invalidates this process's matrix too. This store's own writes are applied in place
instead of rebuilding: added rows are appended (amortised growth), deleted and replaced ones
removed. That keeps a chat that indexes a turn and then recalls from paying a full reload
each turn, and a large model from a reload of minutes after a forget.

A model of ``HALF_FROM`` rows or more is held in float16 (docs/recall.md, "Ten million
vectors"): at 384 dimensions ten million float32 rows are 15 GB, float16 7.7 GB, beside the
approximate index that serves such a model's wide scopes. Scores are always computed in
float32 (``dot`` converts a block of rows at a time, so a whole-model scan never holds a
float32 copy of the model); rows are normalised in float32 before they are stored, so a
raw vector whose squares overflow float16 still stores its direction.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]
#: Rows as a matrix holds them: float32, or float16 from ``HALF_FROM`` rows.
AnyRows = npt.NDArray[np.floating[Any]]
IdArray = npt.NDArray[np.int64]

#: Rows fetched per round trip while building (bounds the temporary bytes held at once).
_CHUNK = 16_384
#: From this many rows a model's matrix is float16 (the cosine changes by about 1e-3 at
#: most, which the recall@10 of the approximate index measures; below, float32 as before).
HALF_FROM = 2_000_000
#: Rows of a float16 matrix converted to float32 at once by ``dot`` (6 MB at 384 dims).
_DOT_BLOCK = 4_096
#: Rows moved down at once when ``remove`` closes the gaps (the temporary it gathers).
_MOVE_BLOCK = 65_536


def dot(rows: AnyRows, unit: FloatMatrix) -> npt.NDArray[np.float32]:
    """``rows @ unit`` in float32, whatever the rows' precision; float16 rows are converted
    a block at a time (numpy would otherwise make a float32 copy of all of them first, and
    its float16 product has no BLAS)."""
    if rows.dtype == np.float32:
        return np.asarray(rows @ unit, dtype=np.float32)
    out = np.empty(len(rows), dtype=np.float32)
    for lo in range(0, len(rows), _DOT_BLOCK):
        block = rows[lo : lo + _DOT_BLOCK].astype(np.float32)
        out[lo : lo + len(block)] = block @ unit
    return out


def full(rows: AnyRows) -> FloatMatrix:
    """``rows`` as float32 (themselves when they are; a converted copy of float16 rows)."""
    return rows if rows.dtype == np.float32 else rows.astype(np.float32)


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

    _buffer: AnyRows

    def __init__(self, model_id: str, dim: int, version: int) -> None:
        self.model_id = model_id
        self.dim = dim
        self.version = version
        self.size = 0
        #: Every role the model's rows hold: a search's role filter that admits all of them
        #: filters nothing, and the engine then skips reading the ids in scope from SQL.
        self.roles: set[str] = set()
        self._buffer = np.empty((0, dim), dtype=np.float32)
        self._ids: IdArray = np.empty(0, dtype=np.int64)

    @property
    def rows(self) -> AnyRows:
        """The unit rows as held: float32, or float16 for a model of ``HALF_FROM`` rows or
        more. Score them with ``dot`` (or ``scores``), gather them through ``full``."""
        return self._buffer[: self.size]

    def scores(self, unit: FloatMatrix) -> npt.NDArray[np.float32]:
        """Every row's cosine with ``unit`` (a unit float32 vector), in float32."""
        return dot(self.rows, unit)

    def gather(self, positions: npt.NDArray[np.intp]) -> FloatMatrix:
        """The rows at ``positions`` as float32."""
        return full(self._buffer[positions])

    @property
    def ids(self) -> IdArray:
        return self._ids[: self.size]

    @classmethod
    def load(cls, conn: sqlite3.Connection, model_id: str, dim: int, version: int) -> ModelMatrix:
        """Read every vector of the model (inside the caller's read transaction).

        The model's ids come from a covering index and are sorted here; the rows are then
        read by ranges of the primary key. ``WHERE model_id = ? ORDER BY id`` made SQLite
        sort every row, vectors included, in a temporary B-tree held in memory
        (``temp_store = MEMORY``): 15 GB more at ten million rows."""
        ids = np.fromiter(
            (
                row[0]
                for row in conn.execute("SELECT id FROM vectors WHERE model_id = ?", (model_id,))
            ),
            dtype=np.int64,
        )
        ids.sort()
        matrix = cls(model_id, dim, version)
        matrix._reserve(len(ids))
        for lo in range(0, len(ids), _CHUNK):
            part = ids[lo : lo + _CHUNK]
            chunk = conn.execute(
                "SELECT id, vector, role FROM vectors NOT INDEXED "
                "WHERE id BETWEEN ? AND ? AND model_id = ? ORDER BY id",
                (int(part[0]), int(part[-1]), model_id),
            ).fetchall()
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

    def remove(self, ids: npt.ArrayLike) -> bool:
        """Drop the rows of ``ids``, keeping the others in order; False (nothing changed)
        when one of them is not held, which means the matrix is out of step.

        The rows after the first removed one move down a block at a time, in place: at ten
        million rows a reload from the table takes minutes and a masked copy would need the
        matrix's memory twice."""
        doomed = np.unique(np.asarray(ids, dtype=np.int64))
        if len(doomed) == 0:
            return True
        pos = self.positions(doomed)
        if pos is None:
            return False
        first = int(pos[0])
        keep = np.ones(self.size - first, dtype=bool)
        keep[pos - first] = False
        sources = np.flatnonzero(keep) + first
        # Every source lies at or past its destination, and blocks go upwards, so no block
        # overwrites a row a later block still has to read.
        for lo in range(0, len(sources), _MOVE_BLOCK):
            block = sources[lo : lo + _MOVE_BLOCK]
            self._buffer[first + lo : first + lo + len(block)] = self._buffer[block]
            self._ids[first + lo : first + lo + len(block)] = self._ids[block]
        self.size -= len(doomed)
        return True

    def _put(self, ids: list[int], rows: FloatMatrix) -> None:
        start, end = self.size, self.size + len(ids)
        self._reserve(end)
        # Normalised in float32 before a float16 buffer rounds them (see the module).
        self._buffer[start:end] = normalise(np.array(rows, dtype=np.float32))
        self._ids[start:end] = ids
        self.size = end

    def _reserve(self, needed: int) -> None:
        capacity = len(self._ids)
        if needed <= capacity:
            return
        new_capacity = max(needed, int(capacity * 1.5) + 64)
        # Past HALF_FROM rows the buffer turns float16 (needed, not capacity, decides: a
        # model loaded with 1.9M rows stays float32 until it holds 2M).
        dtype = np.float16 if needed >= HALF_FROM else self._buffer.dtype
        if dtype == np.float16:
            new_capacity = max(needed, int(capacity * 1.25) + 64)
        buffer = np.empty((new_capacity, self.dim), dtype=dtype)
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


__all__ = [
    "HALF_FROM",
    "AnyRows",
    "FloatMatrix",
    "IdArray",
    "ModelMatrix",
    "decode",
    "dot",
    "full",
    "normalise",
    "top_k",
]
