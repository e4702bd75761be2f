"""``AnnIndex``: the approximate index of one model's vectors, used for wide scopes only.

Why an approximate index at all: an exact scope of ``all`` at a million vectors is a scan
of 1.5 GB per query. Past ``MIN_ROWS`` vectors of a model, a faiss inverted-file index with
one-bit RaBitQ codes scanned 32 rows at a time (``IndexIVFRaBitQFastScan``: 1/32 of the
float32 bytes plus a few floats a row) proposes a pool of candidates; the scope is applied
*inside* its search as a per-query bitmap of the row ids in scope (``IDSelectorBitmap``),
the pool is re-ranked exactly against the float32 rows the store already holds, and every
hit is re-checked against the live rows in SQL. Fewer than ``k`` in-scope hits while ``k``
exist widens the search (more probes) and finally falls back to the exact scan, so ``k``
come back whenever ``k`` exist.

Why these codes and not 8-bit scalar ones: real embeddings spread a query's ten nearest
rows over many cells, so reaching recall@10 0.95 means scanning a large share of the rows;
these codes scan a row 2 to 10 times faster than 8-bit ones, and a pool of ``MIN_POOL``
re-ranked exactly makes up for their coarser scores (docs/recall.md, "Wide scopes").

The index also carries the scope columns of its rows (session, role, platform, user as
small integer codes) so a wide scope becomes a bitmap without reading a million ids from
SQL per query; a stale code can only cost recall, never admit a row, because of the SQL
re-check.

faiss is imported by the functions that build, load or search an index, never with this
module's importers at plugin load.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from aalis_api_vectorstore import ScopeFilter

from aalis_plugin_vectorstore_sqlite._matrix import AnyRows

FloatMatrix = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int32]

#: A model with fewer vectors than this never gets an index (its scans are fast enough).
MIN_ROWS = 50_000
#: A scope with fewer candidates than this is scanned exactly (gathering its rows is
#: cheaper than the index; measured in benchmarks/recall_speed.py, docs/recall.md, "Wide scopes").
EXACT_BELOW = 20_000
#: Candidates asked of the index per hit wanted, re-ranked exactly (at least ``MIN_POOL``):
#: one-bit codes rank coarsely, a pool of 256 re-ranked exactly loses nothing measurable
#: against 8-bit codes' pool of 64 on real embeddings (docs/recall.md, "Wide scopes").
POOL_FACTOR = 16
MIN_POOL = 256
#: Rows the first try may scan: calibration chooses no more probes than scan this many (and
#: at least ``probes_for``). About 3 ms of one core at a million rows here, which keeps a
#: wide search of a million rows within 10 ms (docs/recall.md, "Wide scopes").
SCAN_BUDGET = 150_000
#: Recall@10 that calibration asks of stored rows searching for their neighbours. Higher
#: than the 0.95 wanted of real queries: a stored row finds its neighbours in fewer cells than
#: a query does (docs/recall.md, "Wide scopes").
CALIBRATION_TARGET = 0.99
#: The index file's layout; another one (an older release's codes) is rebuilt from the store.
FORMAT = 2
#: The share of an index's rows that may change between a snapshot and now before a catch-up
#: is judged not worth it and the index is rebuilt from the store instead.
CATCH_UP_SHARE = 0.2
#: Rebuilt once it holds this many times the rows it was trained on (its cells grow uneven).
REGROW = 2.0
_PROBE_SEED = 20261202


@functools.cache
def available() -> bool:
    """Whether the ``[ann]`` extra (faiss-cpu) is installed; checked without importing it."""
    import importlib.util

    return importlib.util.find_spec("faiss") is not None


def cells_for(n: int) -> int:
    """Inverted lists for ``n`` vectors: about 4 sqrt(n), a power of two in [64, 2048].

    Real embeddings spread a query's neighbours over many cells; finer cells hold them in a
    smaller share of the rows (recall@10 at a quarter of the rows scanned, 40 960 real
    embeddings: 0.94 with sqrt(n) cells, 0.97 with 4 sqrt(n); docs/recall.md, "Wide
    scopes"). Past 2048, training and assigning ten million rows takes longer than this
    machine's budget for a build; a probe then scans more rows instead."""
    return int(min(2048, max(64, 2 ** round(math.log2(max(1.0, 4 * math.sqrt(n)))))))


def probes_for(cells: int) -> int:
    """Probes of the first try: 1/32 of the cells (recall@10 >= 0.95 on clustered sets)."""
    return max(8, cells // 32)


def probe_cap(cells: int, rows: int) -> int:
    """The most probes calibration may choose for an index of ``rows`` rows: as many as scan
    ``SCAN_BUDGET`` rows (every cell of a small index), never fewer than ``probes_for``."""
    return int(min(cells, max(probes_for(cells), cells * SCAN_BUDGET // max(1, rows))))


def new_index(dim: int, cells: int) -> Any:
    """An untrained IVF index of one-bit RaBitQ codes, inner product on unit vectors."""
    import faiss

    quantizer = faiss.IndexFlatIP(dim)
    # faiss's Python wrapper keeps ``quantizer`` alive as long as the index.
    return faiss.IndexIVFRaBitQFastScan(quantizer, dim, cells, faiss.METRIC_INNER_PRODUCT)


def probe_vector(dim: int) -> FloatMatrix:
    """A fixed random direction: a row's cosine with it is the row's fingerprint, which tells
    a rewritten vector under a reused row id from the one the index holds."""
    rng = np.random.default_rng(_PROBE_SEED)
    probe = rng.standard_normal(dim).astype(np.float32)
    return probe / np.float32(np.linalg.norm(probe))


class Vocab:
    """Strings (or None) of one scope column and their small integer codes."""

    __slots__ = ("codes", "values")

    def __init__(self, values: Sequence[str | None] = ()) -> None:
        self.values: list[str | None] = list(values)
        self.codes: dict[str | None, int] = {v: i for i, v in enumerate(self.values)}

    def code(self, value: str | None) -> int:
        found = self.codes.get(value)
        if found is None:
            found = self.codes[value] = len(self.values)
            self.values.append(value)
        return found

    def encode(self, values: Sequence[str | None]) -> Codes:
        return np.fromiter((self.code(v) for v in values), dtype=np.int32, count=len(values))

    def table(self, admitted: frozenset[str]) -> npt.NDArray[np.bool_]:
        """A lookup table: ``table[code]`` is True for the admitted values."""
        table = np.zeros(len(self.values) + 1, dtype=bool)
        for value in admitted:
            code = self.codes.get(value)
            if code is not None:
                table[code] = True
        return table


class Columns:
    """Scope columns of the index's rows, aligned with its ids."""

    NAMES = ("session", "role", "platform", "user")

    def __init__(self) -> None:
        self.vocab = {name: Vocab() for name in self.NAMES}
        self.codes = {name: np.empty(0, dtype=np.int32) for name in self.NAMES}

    def encode(self, rows: Sequence[tuple[str, str, str | None, str | None]]) -> dict[str, Codes]:
        return {
            name: self.vocab[name].encode([row[i] for row in rows])
            for i, name in enumerate(self.NAMES)
        }


class AnnIndex:
    """A faiss IVF index of one model, its ids (ascending), fingerprints and columns.

    ``version`` is the model's ``version`` in SQLite (bumped by every row written or
    deleted, by any process) that the index reflects; a different one means stale.
    """

    def __init__(self, model_id: str, dim: int, index: Any, version: int, trained: int) -> None:
        self.model_id = model_id
        self.dim = dim
        self.index = index
        self.version = version
        self.trained = trained
        self.ids: IdArray = np.empty(0, dtype=np.int64)
        self.fingerprints: FloatMatrix = np.empty(0, dtype=np.float32)
        self.columns = Columns()
        self.probe = probe_vector(dim)
        self.dirty = True
        self._all_bits: npt.NDArray[np.uint8] | None = None
        #: Probes of a first try, chosen by ``calibrate`` on the index's own rows (None:
        #: ``probes_for``).
        self.probes: int | None = None

    @property
    def size(self) -> int:
        return len(self.ids)

    @classmethod
    def train(cls, model_id: str, units: FloatMatrix, version: int, *, seed: int = 1) -> AnnIndex:
        """An empty index whose cells are trained on a sample of ``units`` (unit rows)."""
        n, dim = units.shape
        cells = cells_for(n)
        index = new_index(dim, cells)
        sample_size = min(n, 48 * cells)
        rng = np.random.default_rng(seed)
        sample = units[np.sort(rng.choice(n, size=sample_size, replace=False))]
        index.cp.seed = seed
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        return cls(model_id, dim, index, version, n)

    # -- keeping in step ------------------------------------------------------------------

    def add(
        self,
        ids: IdArray,
        units: FloatMatrix,
        meta: Sequence[tuple[str, str, str | None, str | None]],
    ) -> None:
        """Add rows (ids not held; unit float32 vectors; session, role, platform, user)."""
        if len(ids) == 0:
            return
        ids = np.asarray(ids, dtype=np.int64)
        units = np.ascontiguousarray(units, dtype=np.float32)
        self.index.add_with_ids(units, ids)
        codes = self.columns.encode(meta)
        fingerprints = units @ self.probe
        if self.size == 0 or int(ids.min()) > int(self.ids[-1]):
            order = np.argsort(ids, kind="stable")
            self.ids = np.concatenate([self.ids, ids[order]])
            self.fingerprints = np.concatenate([self.fingerprints, fingerprints[order]])
            for name in Columns.NAMES:
                self.columns.codes[name] = np.concatenate(
                    [self.columns.codes[name], codes[name][order]]
                )
        else:
            all_ids = np.concatenate([self.ids, ids])
            order = np.argsort(all_ids, kind="stable")
            self.ids = all_ids[order]
            self.fingerprints = np.concatenate([self.fingerprints, fingerprints])[order]
            for name in Columns.NAMES:
                self.columns.codes[name] = np.concatenate([self.columns.codes[name], codes[name]])[
                    order
                ]
        self._changed()

    def remove(self, ids: IdArray) -> None:
        """Forget rows (ids not held are ignored)."""
        if len(ids) == 0 or self.size == 0:
            return
        import faiss

        ids = np.unique(np.asarray(ids, dtype=np.int64))
        pos = np.searchsorted(self.ids, ids)
        pos = pos[pos < self.size]
        pos = pos[np.isin(self.ids[pos], ids)]
        if len(pos) == 0:
            return
        self.index.remove_ids(faiss.IDSelectorBatch(self.ids[pos]))
        keep = np.ones(self.size, dtype=bool)
        keep[pos] = False
        self.ids = self.ids[keep]
        self.fingerprints = self.fingerprints[keep]
        for name in Columns.NAMES:
            self.columns.codes[name] = self.columns.codes[name][keep]
        self._changed()

    def _changed(self) -> None:
        self.dirty = True
        self._all_bits = None

    # -- searching ------------------------------------------------------------------------

    def scope_mask(self, where: ScopeFilter) -> npt.NDArray[np.bool_] | None:
        """Which held rows ``where`` admits (None: all of them), from the scope columns."""
        mask: npt.NDArray[np.bool_] | None = None
        codes, vocab = self.columns.codes, self.columns.vocab

        def narrow(part: npt.NDArray[np.bool_]) -> None:
            nonlocal mask
            mask = part if mask is None else mask & part

        if where.session_ids is not None:
            narrow(vocab["session"].table(where.session_ids)[codes["session"]])
        for column, value in (("platform", where.platform), ("user", where.user_id)):
            if value is not None:
                code = vocab[column].codes.get(value)
                if code is None:
                    return np.zeros(self.size, dtype=bool)
                narrow(codes[column] == code)
        if where.roles is not None:
            table = vocab["role"].table(where.roles)
            if not table[: len(vocab["role"].values)].all():
                narrow(table[codes["role"]])
        for session in where.exclude_session_ids:
            code = vocab["session"].codes.get(session)
            if code is not None:
                narrow(codes["session"] != code)
        return mask

    def bitmap(self, mask: npt.NDArray[np.bool_] | None) -> npt.NDArray[np.uint8]:
        """The ids admitted by ``mask`` as faiss's ``IDSelectorBitmap`` reads them."""
        if mask is None and self._all_bits is not None:
            return self._all_bits
        bound = int(self.ids[-1]) + 1 if self.size else 1
        bits = np.zeros(bound, dtype=bool)
        bits[self.ids if mask is None else self.ids[mask]] = True
        packed = np.packbits(bits, bitorder="little")
        if mask is None:
            self._all_bits = packed
        return packed

    def candidates(
        self, unit: FloatMatrix, want: int, bits: npt.NDArray[np.uint8], probes: int
    ) -> IdArray:
        """Up to ``want`` ids in the bitmap, best approximate inner product first."""
        import faiss

        selector = faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits))
        params: Any = faiss.SearchParametersIVF()
        params.sel = selector  # ``selector`` stays referenced until the search returns
        params.nprobe = min(probes, int(self.index.nlist))
        _, labels = self.index.search(unit.reshape(1, -1), want, params=params)
        found = labels[0]
        return np.asarray(found[found >= 0], dtype=np.int64)

    def calibrate(
        self,
        rows: AnyRows,
        *,
        samples: int = 64,
        k: int = 10,
        target: float | None = None,
    ) -> None:
        """Choose the first try's probes on this data: stored rows ``rows`` (aligned with the
        ids) ask for their ``k`` nearest other rows, re-ranked as a search re-ranks them;
        probes double from ``probes_for`` until recall@k against the exact answer reaches
        ``target`` (``CALIBRATION_TARGET``), at most ``probe_cap`` (real embeddings need far
        more probes than clustered test data: docs/recall.md, "Wide scopes")."""
        n = len(rows)
        if n != self.size or n < 1_000:
            return
        goal = CALIBRATION_TARGET if target is None else target
        rng = np.random.default_rng(_PROBE_SEED)
        picks = np.sort(rng.choice(n, size=min(samples, n), replace=False))
        queries = np.ascontiguousarray(rows[picks], dtype=np.float32)
        # The exact answers in one pass over the rows (a million rows: a few seconds).
        best = np.full((len(picks), k), -np.inf, dtype=np.float32)
        best_at = np.zeros((len(picks), k), dtype=np.int64)
        step = 65_536
        for lo in range(0, n, step):
            scores = queries @ rows[lo : lo + step].T
            inside = (picks >= lo) & (picks < lo + step)
            scores[np.flatnonzero(inside), picks[inside] - lo] = -np.inf  # not itself
            merged = np.concatenate([best, scores], axis=1)
            at = np.concatenate(
                [best_at, np.broadcast_to(np.arange(lo, lo + scores.shape[1]), scores.shape)],
                axis=1,
            )
            top = np.argpartition(-merged, k - 1, axis=1)[:, :k]
            best = np.take_along_axis(merged, top, axis=1)
            best_at = np.take_along_axis(at, top, axis=1)
        truths = [set(row.tolist()) for row in best_at]
        cells = int(self.index.nlist)
        cap = probe_cap(cells, n)
        bits = self.bitmap(None)
        want = max(MIN_POOL, POOL_FACTOR * k) + 1
        probes = min(cap, probes_for(cells))
        while True:
            hit = 0
            for p, query, truth in zip(picks, queries, truths, strict=True):
                found = self.candidates(query, want, bits, probes)
                pos = np.searchsorted(self.ids, found)
                pos = pos[pos != p]
                top = pos[np.argsort(-(rows[pos] @ query), kind="stable")[:k]]
                hit += len(truth & set(top.tolist()))
            if hit / (k * len(picks)) >= goal or probes >= cap:
                break
            probes = min(cap, probes * 2)
        self.probes = probes

    # -- persistence ----------------------------------------------------------------------

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        import json

        import faiss

        arrays: dict[str, npt.NDArray[Any]] = {
            "index": faiss.serialize_index(self.index),
            "ids": self.ids,
            "fingerprints": self.fingerprints,
            "header": np.frombuffer(
                json.dumps(
                    {
                        "format": FORMAT,
                        "model_id": self.model_id,
                        "dim": self.dim,
                        "version": self.version,
                        "trained": self.trained,
                        "probes": self.probes,
                        "vocab": {n: self.columns.vocab[n].values for n in Columns.NAMES},
                    }
                ).encode(),
                dtype=np.uint8,
            ),
        }
        for name in Columns.NAMES:
            arrays[f"codes_{name}"] = self.columns.codes[name]
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Any) -> AnnIndex:
        """The inverse of ``to_arrays`` (a ``ValueError`` when the file is not one)."""
        import json

        import faiss

        header = json.loads(bytes(arrays["header"]).decode())
        if header.get("format") != FORMAT:
            raise ValueError(f"unknown index format {header.get('format')!r}")
        index = faiss.deserialize_index(np.asarray(arrays["index"], dtype=np.uint8))
        ann = cls(
            str(header["model_id"]),
            int(header["dim"]),
            index,
            int(header["version"]),
            int(header["trained"]),
        )
        ann.ids = np.asarray(arrays["ids"], dtype=np.int64)
        probes = header.get("probes")
        ann.probes = int(probes) if isinstance(probes, int) else None
        ann.fingerprints = np.asarray(arrays["fingerprints"], dtype=np.float32)
        for name in Columns.NAMES:
            ann.columns.vocab[name] = Vocab(header["vocab"][name])
            ann.columns.codes[name] = np.asarray(arrays[f"codes_{name}"], dtype=np.int32)
        lengths = {len(ann.ids), len(ann.fingerprints), int(index.ntotal)}
        lengths |= {len(ann.columns.codes[n]) for n in Columns.NAMES}
        if len(lengths) != 1 or index.d != ann.dim:
            raise ValueError("index file is inconsistent")
        ann.dirty = False
        return ann


__all__ = [
    "EXACT_BELOW",
    "MIN_ROWS",
    "AnnIndex",
    "Columns",
    "Vocab",
    "available",
    "cells_for",
    "new_index",
    "probe_cap",
    "probe_vector",
    "probes_for",
]
