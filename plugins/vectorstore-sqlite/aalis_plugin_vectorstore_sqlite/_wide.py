"""``WideScopes``: the engine's approximate indexes, their builds, files and upkeep.

One instance per engine, used from the engine's worker thread, except the builds, which run
on a background thread of their own (a search never waits for one: until an index is ready,
wide scopes take the exact scan). The rules (docs/recall.md, "Wide scopes"):

* **In step with this process's writes.** An upsert or delete collects the row ids it
  replaces, removes and inserts inside its transaction; after the commit they are applied
  to every index that was current before it (its ``version`` equal to the model's version
  in SQLite before the write), which then takes the model's new version. A failed write
  applies nothing.
* **Stale means caught up or rebuilt.** Another process's write (or a write of an older
  plugin that knows no index) moves the model's version past the index's: the next wide
  search diffs the index's ids and fingerprints against the live matrix and applies the
  difference, or, past ``CATCH_UP_SHARE`` of the rows, rebuilds from the store in the
  background.
* **A file beside the database** (``<db>.ann/<model>.npz``, written whole and renamed, so a
  kill -9 leaves the old file or the new one) saves the build; it is loaded by the next
  process in the background and diffed like a stale index before first use. A missing,
  unreadable or foreign file means a rebuild from the store.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog
from aalis_api_vectorstore import ScopeFilter

import aalis_plugin_vectorstore_sqlite._ann as _ann
from aalis_plugin_vectorstore_sqlite._ann import AnnIndex
from aalis_plugin_vectorstore_sqlite._matrix import FloatMatrix, IdArray, ModelMatrix, normalise
from aalis_plugin_vectorstore_sqlite._scope import MAX_INLINE, scope_clause

_log = structlog.get_logger("aalis.vectorstore-sqlite")
_Meta = tuple[str, str, str | None, str | None]
#: Rows added to a building index per call (a cancelled build stops between chunks).
_ADD_CHUNK = 100_000
#: Scopes naming at least this many sessions may be wide enough for the index to pay.
_MANY_SESSIONS = 64


def _meta_rows(conn: sqlite3.Connection, sql: str, params: list[object]) -> dict[int, _Meta]:
    return {int(r[0]): (r[1], r[2], r[3], r[4]) for r in conn.execute(sql, params)}


def _meta_of(conn: sqlite3.Connection, ids: IdArray) -> dict[int, _Meta]:
    found: dict[int, _Meta] = {}
    wanted = [int(i) for i in ids]
    for start in range(0, len(wanted), MAX_INLINE):
        chunk = wanted[start : start + MAX_INLINE]
        found.update(
            _meta_rows(
                conn,
                "SELECT id, session_id, role, platform, user_id FROM vectors "
                f"WHERE id IN ({','.join('?' * len(chunk))})",
                list(chunk),
            )
        )
    return found


def _versions(conn: sqlite3.Connection) -> dict[str, int]:
    return {str(m): int(v) for m, v in conn.execute("SELECT model_id, version FROM models")}


class _Pending:
    """One write's effect on the indexes, applied only once its transaction committed."""

    def __init__(self, before: dict[str, int]) -> None:
        self.before = before
        self.after: dict[str, int] = {}
        self.removed: dict[str, list[int]] = {}
        self.added: dict[str, tuple[IdArray, FloatMatrix, list[_Meta]]] = {}


class WideScopes:
    """Approximate indexes per model, for searches whose scope is wide."""

    def __init__(self, db_path: Path) -> None:
        self.folder = db_path.with_name(db_path.name + ".ann")
        self.db_path = db_path
        self.indexes: dict[str, AnnIndex] = {}
        #: model_id -> the running build and the event that cancels it
        self._builds: dict[str, tuple[threading.Thread, threading.Event]] = {}
        self._finished: dict[str, AnnIndex | None] = {}
        self._lock = threading.Lock()
        self._closed = False
        #: Searches answered by an index (the rest took the exact scan); for tests and logs.
        self.served = 0
        self._pending: _Pending | None = None

    # -- files ----------------------------------------------------------------------------

    def file_of(self, model_id: str) -> Path:
        digest = hashlib.sha256(model_id.encode()).hexdigest()[:24]
        return self.folder / f"{digest}.npz"

    def save(self, ann: AnnIndex) -> None:
        """Write the index whole to a temporary file and rename it over the old one."""
        self.folder.mkdir(mode=0o700, exist_ok=True)
        target = self.file_of(ann.model_id)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
        try:
            savez: Any = np.savez  # numpy's stub types the keyword arrays as flags
            with os.fdopen(fd, "wb") as handle:
                savez(handle, **ann.to_arrays())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        ann.dirty = False

    def _load(self, model_id: str, dim: int) -> AnnIndex | None:
        path = self.file_of(model_id)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as arrays:
                ann = AnnIndex.from_arrays(arrays)
        except Exception as exc:  # any unreadable file is rebuilt, never trusted
            _log.warning(
                "approximate index file unreadable; rebuilding", path=str(path), error=str(exc)
            )
            return None
        if ann.model_id != model_id or ann.dim != dim:
            return None
        return ann

    # -- building -------------------------------------------------------------------------

    def _start_build(self, matrix: ModelMatrix) -> None:
        model_id = matrix.model_id
        if model_id in self._builds or self._closed:
            return
        cancel = threading.Event()
        thread = threading.Thread(
            target=self._build,
            args=(model_id, matrix.dim, matrix.ids.copy(), matrix.rows, matrix.version, cancel),
            name=f"aalis-ann {model_id[:40]}",
            daemon=True,
        )
        self._builds[model_id] = (thread, cancel)
        thread.start()

    def _build(
        self,
        model_id: str,
        dim: int,
        ids: IdArray,
        rows: FloatMatrix,
        version: int,
        cancel: threading.Event,
    ) -> None:
        """Load the saved index or build one from the store; never raises."""
        ann: AnnIndex | None = None
        try:
            ann = self._load(model_id, dim)
            if ann is not None:
                # A file is never trusted as current: its first use diffs it against the
                # live rows (it may be older, or belong to a restored copy of the database).
                ann.version = -1
            else:
                ann = self._from_store(model_id, ids, rows, version, cancel)
                if ann is not None and not cancel.is_set():
                    self.save(ann)
        except Exception as exc:
            _log.warning(
                "approximate index build failed; exact scans", model_id=model_id, error=str(exc)
            )
            ann = None
        with self._lock:
            if not cancel.is_set():
                self._finished[model_id] = ann

    def _from_store(
        self,
        model_id: str,
        ids: IdArray,
        rows: FloatMatrix,
        version: int,
        cancel: threading.Event,
    ) -> AnnIndex | None:
        # The scope columns are read a chunk at a time, beside the rows they describe: held
        # whole, ten million of them as Python tuples took about 4 GB beside the matrix and
        # the index (the first ten-million build through the store ran out of memory).
        ann = AnnIndex.train(model_id, rows, -1)
        complete = True
        conn = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=30)
        try:
            for lo in range(0, len(ids), _ADD_CHUNK):
                if cancel.is_set():
                    return None
                chunk_ids = ids[lo : lo + _ADD_CHUNK]
                meta = _meta_rows(
                    conn,
                    # NOT INDEXED: a range of the primary key, not every row of the
                    # model through its index once per chunk.
                    "SELECT id, session_id, role, platform, user_id FROM vectors NOT INDEXED "
                    "WHERE id BETWEEN ? AND ? AND model_id = ?",
                    [int(chunk_ids[0]), int(chunk_ids[-1]), model_id],
                )
                # A row deleted since the snapshot is left out, and the index then starts
                # behind (version -1): its first use catches it up against the live rows.
                part = np.fromiter((int(i) in meta for i in chunk_ids), dtype=bool)
                complete = complete and bool(part.all())
                chunk_rows = rows[lo : lo + _ADD_CHUNK]
                kept_ids = chunk_ids[part]
                ann.add(
                    kept_ids,
                    chunk_rows if part.all() else chunk_rows[part],
                    [meta[int(i)] for i in kept_ids],
                )
        finally:
            conn.close()
        if complete:
            ann.version = version
            ann.calibrate(rows)
        return ann

    def reading(self) -> set[str]:
        """The models whose matrix rows a running build is reading (a view, not a copy: the
        engine must not move those rows in place until the build ends)."""
        return {m for m, (thread, _) in list(self._builds.items()) if thread.is_alive()}

    def wait(self, timeout: float | None = None) -> None:
        """Wait for running builds (tests and benchmarks; searches never wait)."""
        for thread, _ in list(self._builds.values()):
            thread.join(timeout)

    # -- readiness ------------------------------------------------------------------------

    def _ready(self, conn: sqlite3.Connection, matrix: ModelMatrix) -> AnnIndex | None:
        """The model's index, current with ``matrix``, or None (a build is started)."""
        model_id = matrix.model_id
        with self._lock:
            if model_id in self._finished:
                built = self._finished.pop(model_id)
                self._builds.pop(model_id, None)
                if built is not None:
                    self.indexes[model_id] = built
        ann = self.indexes.get(model_id)
        if ann is None:
            self._start_build(matrix)
            return None
        if ann.dim != matrix.dim:
            del self.indexes[model_id]
            self._start_build(matrix)
            return None
        if ann.version != matrix.version and not self._catch_up(conn, ann, matrix):
            del self.indexes[model_id]
            self.file_of(model_id).unlink(missing_ok=True)
            self._start_build(matrix)
            return None
        if ann.size > _ann.REGROW * ann.trained and model_id not in self._builds:
            self.file_of(model_id).unlink(missing_ok=True)
            self._start_build(matrix)  # the old index serves until the new one is ready
        return ann

    def _catch_up(self, conn: sqlite3.Connection, ann: AnnIndex, matrix: ModelMatrix) -> bool:
        """Bring a stale index to the matrix's rows by difference; False when too far off."""
        held, live = ann.ids, matrix.ids
        removed = np.setdiff1d(held, live, assume_unique=True)
        added = np.setdiff1d(live, held, assume_unique=True)
        common, in_ann, in_live = np.intersect1d(
            held, live, assume_unique=True, return_indices=True
        )
        fingerprints = matrix.scores(ann.probe)
        changed = common[np.abs(fingerprints[in_live] - ann.fingerprints[in_ann]) > 1e-5]
        if len(removed) + len(added) + 2 * len(changed) > _ann.CATCH_UP_SHARE * max(1, len(live)):
            return False
        ann.remove(np.concatenate([removed, changed]))
        fresh = np.sort(np.concatenate([added, changed]))
        if len(fresh):
            meta = _meta_of(conn, fresh)
            fresh = np.asarray([i for i in fresh if int(i) in meta], dtype=np.int64)
            pos = matrix.positions(fresh)
            if pos is None:
                return False
            ann.add(fresh, matrix.rows[pos], [meta[int(i)] for i in fresh])
        ann.version = matrix.version
        return True

    # -- searching ------------------------------------------------------------------------

    def search(
        self,
        conn: sqlite3.Connection,
        matrix: ModelMatrix,
        unit: FloatMatrix,
        k: int,
        where: ScopeFilter,
    ) -> tuple[IdArray, npt.NDArray[np.float32]] | None:
        """The exact re-ranked top ``k`` of a wide scope, or None for the exact scan (no
        index yet, a narrow scope, or fewer than ``k`` in-scope hits after widening)."""
        if where.session_ids is not None and len(where.session_ids) < _MANY_SESSIONS:
            return None
        ann = self._ready(conn, matrix)
        if ann is None:
            return None
        mask = ann.scope_mask(where)
        in_scope = ann.size if mask is None else int(np.count_nonzero(mask))
        want = max(_ann.MIN_POOL, _ann.POOL_FACTOR * k)
        if in_scope < _ann.EXACT_BELOW or want * 2 > in_scope:
            return None
        bits = ann.bitmap(mask)
        cells = int(ann.index.nlist)
        probes = ann.probes or _ann.probes_for(cells)
        wanted = min(k, in_scope)
        while True:
            found = ann.candidates(unit, want, bits, probes)
            pos = matrix.positions(np.sort(found))
            if pos is None:
                return None  # the index holds a row the matrix does not: exact scan
            ids = matrix.ids[pos]
            scores = matrix.gather(pos) @ unit
            order = np.argsort(-scores, kind="stable")
            ids, scores = ids[order], scores[order]
            keep = self._live_first(conn, ids, where, wanted)
            ids, scores = ids[keep], scores[keep]
            if len(ids) >= wanted:
                self.served += 1
                return ids, scores
            if probes >= cells:
                return None
            probes = min(cells, probes * 4)

    @classmethod
    def _live_first(
        cls, conn: sqlite3.Connection, ids: IdArray, where: ScopeFilter, wanted: int
    ) -> IdArray:
        """Positions of the first ``wanted`` ids (best first) that are live rows in scope.

        SQL is asked about the best few first and about more only when some of them failed
        (a row deleted by another process since the index saw it): the pool holds hundreds of
        candidates, the answer needs ``wanted``."""
        kept: list[int] = []
        step = max(2 * wanted, 16)
        for lo in range(0, len(ids), step):
            part = ids[lo : lo + step]
            live = cls._recheck(conn, part, where)
            kept.extend(lo + j for j, i in enumerate(part.tolist()) if i in live)
            if len(kept) >= wanted:
                break
        return np.asarray(kept[:wanted], dtype=np.int64)

    @staticmethod
    def _recheck(conn: sqlite3.Connection, ids: IdArray, where: ScopeFilter) -> set[int]:
        """The ids among ``ids`` that are live rows in scope, asked of SQL itself."""
        clause, params = scope_clause(conn, where)
        wanted = [int(i) for i in ids]
        live: set[int] = set()
        for start in range(0, len(wanted), MAX_INLINE):
            chunk = wanted[start : start + MAX_INLINE]
            # NOT INDEXED: the rows are found by id; left to itself the planner walks the
            # model's scope index (every row of the model) to test a few dozen ids.
            sql = (
                "SELECT id FROM vectors NOT INDEXED "
                f"WHERE id IN ({','.join('?' * len(chunk))}) AND {clause}"
            )
            live.update(int(r[0]) for r in conn.execute(sql, [*chunk, *params]))
        return live

    def wants(self, matrix: ModelMatrix, where: ScopeFilter) -> bool:
        """Whether ``search`` may serve this search (cheap; no index needed to answer)."""
        return matrix.size >= _ann.MIN_ROWS and (
            where.session_ids is None or len(where.session_ids) >= _MANY_SESSIONS
        )

    # -- keeping in step (called inside the write's transaction, applied after commit) ----

    @property
    def tracking(self) -> bool:
        return bool(self.indexes)

    def before_write(self, conn: sqlite3.Connection) -> None:
        self._pending = _Pending(_versions(conn)) if self.tracking else None

    def removing(self, rows: Sequence[tuple[int, str]]) -> None:
        """Note the rows (id, model) a ``DELETE`` is about to remove."""
        pending = self._pending
        if pending is None:
            return
        for row_id, model_id in rows:
            if model_id in self.indexes:
                pending.removed.setdefault(model_id, []).append(row_id)

    def inserted(
        self,
        conn: sqlite3.Connection,
        max_id: int,
        rows: list[Any],
        raw: dict[str, FloatMatrix],
    ) -> None:
        """Note the rows an insert just wrote (ids past ``max_id``, in ``rows`` order)."""
        pending = self._pending
        if pending is None:
            return
        for model_id, vectors in raw.items():
            if model_id not in self.indexes:
                continue
            ids = np.fromiter(
                (
                    int(r[0])
                    for r in conn.execute(
                        "SELECT id FROM vectors WHERE id > ? AND model_id = ? ORDER BY id",
                        (max_id, model_id),
                    )
                ),
                dtype=np.int64,
            )
            meta = [(r[1], r[3], r[5], r[6]) for r in rows if r[4] == model_id]
            units = normalise(np.array(vectors, dtype=np.float32, copy=True))
            pending.added[model_id] = (ids, units, meta)

    def after_write(self, conn: sqlite3.Connection) -> None:
        if self._pending is not None:
            self._pending.after = _versions(conn)

    def committed(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        for model_id, ann in list(self.indexes.items()):
            if ann.version != pending.before.get(model_id):
                continue  # already stale: the next search catches it up
            ann.remove(np.asarray(pending.removed.get(model_id, []), dtype=np.int64))
            if model_id in pending.added:
                ann.add(*pending.added[model_id])
            ann.version = pending.after.get(model_id, -1)

    def failed(self) -> None:
        self._pending = None

    def _cancel_builds(self) -> None:
        with self._lock:
            for _, cancel in self._builds.values():
                cancel.set()
            self._builds.clear()
            self._finished.clear()

    def clear(self) -> None:
        """Every vector deleted: indexes, builds (cancelled, never installed) and files go."""
        self._cancel_builds()
        self.indexes.clear()
        if self.folder.exists():
            for path in self.folder.glob("*.npz"):
                path.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop builds and save every index changed since it was saved."""
        self._closed = True
        self._cancel_builds()
        for ann in self.indexes.values():
            if ann.dirty:
                try:
                    self.save(ann)
                except OSError as exc:
                    _log.warning("approximate index not saved", error=str(exc))
        self.indexes.clear()


__all__ = ["WideScopes"]
