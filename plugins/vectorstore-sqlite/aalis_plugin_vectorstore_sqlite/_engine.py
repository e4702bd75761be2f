"""``Engine``: the synchronous store, run on the store's one worker thread.

Every search is one read transaction: the model's version is checked (the RAM matrix is
rebuilt if another write changed the model), the scope filter selects the candidate row ids
in SQL through the ``(model_id, session_id|platform|user_id)`` indexes, and numpy scores only
those rows (or, when most rows qualify, scores the whole matrix under a mask). The filter is
therefore part of the query: ``k`` hits come back whenever ``k`` rows are in scope, however
many better matches lie outside it.

numpy (and ``matrix``, built on it) is imported by the functions that compute, not with the
module: opening a store at start (every ``aalis`` command starts this plugin) needs none.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from aalis_api_vectorstore import (
    DimensionMismatch,
    LexicalTerms,
    ModelStats,
    ScopeFilter,
    VectorEntry,
    VectorHit,
    VectorRecord,
    VectorStoreError,
    VectorStoreStats,
    VectorStoreUnavailable,
    batch_dims,
)

import aalis_plugin_vectorstore_sqlite._in_step as in_step
from aalis_plugin_vectorstore_sqlite._lexical import (
    TABLE as LEXICAL_TABLE,
    index_after,
    search as lexical_rows,
)
from aalis_plugin_vectorstore_sqlite._scope import MAX_INLINE, scope_clause

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from aalis_plugin_vectorstore_sqlite._matrix import FloatMatrix, ModelMatrix
    from aalis_plugin_vectorstore_sqlite._wide import WideScopes

T = TypeVar("T")

#: Below this share of a model's rows in scope, only those rows are gathered and scored.
_GATHER_SHARE = 0.25
_Row = tuple[str, str, int, str, str, str | None, str | None, str, bytes]


@attrs.frozen
class PreparedBatch:
    """An upsert batch checked and encoded, ready for one transaction."""

    rows: list[_Row]
    dims: dict[str, int]
    #: model_id -> the batch's raw float32 rows of that model, in ``rows`` order
    raw: dict[str, FloatMatrix]


def _encodable(value: str | None, what: str) -> None:
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(
                f"{what} holds a lone surrogate, which cannot be stored as UTF-8 text"
            ) from None


def as_float32(vector: object, *, what: str = "vector") -> FloatMatrix:
    """One vector as float32, checked finite (before and after narrowing from float64)."""
    import numpy as np

    try:
        wide = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be a sequence of floats ({exc})") from None
    if wide.ndim != 1 or wide.size == 0:
        raise ValueError(f"{what} must be a non-empty flat sequence of floats")
    if not np.isfinite(wide).all():
        raise ValueError(f"{what} holds a NaN or infinite value")
    narrow = wide.astype("<f4")
    if not np.isfinite(narrow).all():
        raise ValueError(f"{what} holds a value too large for float32 (it would be infinite)")
    return narrow


def prepare(records: Sequence[VectorRecord]) -> PreparedBatch:
    """Check widths, values and text of a whole batch before anything is written."""
    import numpy as np

    dims = batch_dims(records)
    raw: dict[str, FloatMatrix] = {}
    for model_id in dims:
        rows = [record.vector for record in records if record.model_id == model_id]
        try:
            wide = np.asarray(rows, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"vectors must be sequences of floats ({exc})") from None
        if not np.isfinite(wide).all():
            raise ValueError("a vector holds a NaN or infinite value; nothing was written")
        narrow = wide.astype("<f4")
        if not np.isfinite(narrow).all():
            raise ValueError("a vector holds a value too large for float32; nothing was written")
        raw[model_id] = narrow
    offsets = dict.fromkeys(dims, 0)
    out: list[_Row] = []
    for record in records:
        for value, what in (
            (record.message_id, "message_id"),
            (record.session_id, "session_id"),
            (record.role, "role"),
            (record.text, "text"),
            (record.platform, "platform"),
            (record.user_id, "user_id"),
        ):
            _encodable(value, what)
        index = offsets[record.model_id]
        offsets[record.model_id] = index + 1
        out.append(
            (
                record.message_id,
                record.session_id,
                record.timestamp,
                record.role,
                record.model_id,
                record.platform,
                record.user_id,
                record.text,
                raw[record.model_id][index].tobytes(),
            )
        )
    return PreparedBatch(rows=out, dims=dims, raw=raw)


class Engine:
    """The connection and the RAM matrices; only ever used from the worker thread."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.matrices: dict[str, ModelMatrix] = {}
        #: The approximate indexes of wide scopes, made at the first search of a large
        #: model when faiss is installed (docs/recall.md, "Wide scopes").
        self.wide: WideScopes | None = None
        #: False keeps every search the exact scan (the benchmark's baseline).
        self.approximate = True

    def close(self) -> None:
        if self.wide is not None:
            self.wide.close()
        self.matrices.clear()
        self.conn.close()

    def _removing(
        self,
        wide: WideScopes | None,
        where: str,
        params: Sequence[object],
        into: dict[str, list[int]],
    ) -> None:
        """Note the rows a ``DELETE`` with this ``WHERE`` is about to remove, for the
        indexes (``wide``) and, by model, in ``into`` for the matrices: one read for both."""
        if wide is None and not self.matrices:
            return
        rows = in_step.removing(self.conn, where, params)
        if wide is not None:
            wide.removing(rows)
        for row_id, model_id in rows:
            into.setdefault(model_id, []).append(row_id)

    def _reading(self) -> set[str]:
        return self.wide.reading() if self.wide is not None else set()

    def _tracked(self, begin: str, body: Callable[[], T]) -> T:
        """A write whose effect reaches the approximate indexes only once committed."""
        try:
            result = self._run(begin, body)
        except BaseException:
            # The body brought the matrices through the write before its commit; rolled
            # back, they would claim versions the table may reach again with other rows.
            self.matrices.clear()
            if self.wide is not None:
                self.wide.failed()
            raise
        if self.wide is not None:
            self.wide.committed()
        return result

    # -- transactions ---------------------------------------------------------------------

    def _run(self, begin: str, body: Callable[[], T]) -> T:
        conn = self.conn
        try:
            conn.execute(begin)
            try:
                result = body()
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise VectorStoreError(f"vector store {self.path}: {exc}") from exc
            raise VectorStoreUnavailable(f"vector store {self.path} is unusable: {exc}") from exc
        return result

    # -- writes ---------------------------------------------------------------------------

    def upsert(self, batch: PreparedBatch) -> int:
        if not batch.rows:
            return 0
        return self._tracked("BEGIN IMMEDIATE", lambda: self._upsert(batch))

    def _upsert(self, batch: PreparedBatch) -> int:
        conn = self.conn
        for model_id, width in batch.dims.items():
            row = conn.execute(
                "SELECT dim, count FROM models WHERE model_id = ?", (model_id,)
            ).fetchone()
            if row is not None and row[1] > 0 and row[0] != width:
                raise DimensionMismatch(model_id, int(row[0]), width)
        before = in_step.state(conn, list(self.matrices))
        replaced: dict[str, list[int]] = {}
        wide = self.wide if self.wide is not None and self.wide.tracking else None
        if wide is not None:
            wide.before_write(conn)
        keys = [row[0] for row in batch.rows]
        for start in range(0, len(keys), MAX_INLINE):
            chunk = keys[start : start + MAX_INLINE]
            where = f"message_id IN ({','.join('?' * len(chunk))})"
            self._removing(wide, where, chunk, replaced)
        for model_id, width in batch.dims.items():
            conn.execute(
                "INSERT INTO models (model_id, dim) VALUES (?, ?) "
                "ON CONFLICT (model_id) DO UPDATE SET dim = excluded.dim WHERE count = 0",
                (model_id, width),
            )
        conn.executemany(
            "DELETE FROM vectors WHERE message_id = ?", [row[:1] for row in batch.rows]
        )
        # After the delete: a replaced row with the highest id frees that id for reuse, and
        # every row this batch inserts must be past ``max_id`` to be indexed.
        max_id = conn.execute("SELECT coalesce(max(id), 0) FROM vectors").fetchone()[0]
        conn.executemany(
            "INSERT INTO vectors (message_id, session_id, timestamp, role, model_id, platform, "
            "user_id, text, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            batch.rows,
        )
        index_after(conn, int(max_id))
        if wide is not None:
            wide.inserted(conn, int(max_id), batch.rows, batch.raw)
            wide.after_write(conn)
        in_step.apply(
            conn, self.matrices, before, replaced, batch.raw, int(max_id), self._reading()
        )
        return len(batch.rows)

    def delete(self, session_id: str, ids: list[str] | None, timestamps: list[int] | None) -> int:
        column, values = ("message_id", ids) if ids is not None else ("timestamp", timestamps)

        wide = self.wide if self.wide is not None and self.wide.tracking else None

        def body() -> int:
            before = in_step.state(self.conn, list(self.matrices))
            removed: dict[str, list[int]] = {}
            if wide is not None:
                wide.before_write(self.conn)
            clauses: list[tuple[str, list[object]]] = (
                [("session_id = ?", [session_id])] if values is None else []
            )
            for start in range(0, len(values or ()), MAX_INLINE):
                part: list[object] = list((values or [])[start : start + MAX_INLINE])
                clauses.append(
                    (
                        f"session_id = ? AND {column} IN ({','.join('?' * len(part))})",
                        [session_id, *part],
                    )
                )
            for where, params in clauses:
                self._removing(wide, where, params, removed)
            if values is None:
                count = self.conn.execute(
                    "DELETE FROM vectors WHERE session_id = ?", (session_id,)
                ).rowcount
            else:
                count = 0
                for start in range(0, len(values), MAX_INLINE):
                    chunk = values[start : start + MAX_INLINE]
                    marks = ",".join("?" * len(chunk))
                    count += self.conn.execute(
                        f"DELETE FROM vectors WHERE session_id = ? AND {column} IN ({marks})",
                        (session_id, *chunk),
                    ).rowcount
            if count:
                in_step.apply(self.conn, self.matrices, before, removed, reading=self._reading())
            if wide is not None:
                wide.after_write(self.conn)
            return int(count)

        if values is not None and not values:
            return 0
        return self._tracked("BEGIN IMMEDIATE", body)

    def entries(self, session_id: str) -> list[VectorEntry]:
        def body() -> list[VectorEntry]:
            rows = self.conn.execute(
                "SELECT message_id, timestamp, role, model_id, text FROM vectors "
                "WHERE session_id = ? ORDER BY timestamp, message_id",
                (session_id,),
            ).fetchall()
            return [
                VectorEntry(
                    message_id=m,
                    session_id=session_id,
                    timestamp=int(t),
                    role=r,
                    model_id=mo,
                    text=x,
                )
                for m, t, r, mo, x in rows
            ]

        return self._run("BEGIN", body)

    def sessions(self) -> list[str]:
        return self._run(
            "BEGIN",
            lambda: [
                str(row[0])
                for row in self.conn.execute(
                    "SELECT DISTINCT session_id FROM vectors ORDER BY session_id"
                )
            ],
        )

    def dropped_sessions(self) -> list[str]:
        return self._run(
            "BEGIN",
            lambda: [
                str(row[0])
                for row in self.conn.execute(
                    "SELECT session_id FROM dropped_sessions ORDER BY session_id"
                )
            ],
        )

    def acknowledge_dropped(self, session_ids: list[str]) -> None:
        def body() -> None:
            self.conn.executemany(
                "DELETE FROM dropped_sessions WHERE session_id = ?", [(s,) for s in session_ids]
            )

        if session_ids:
            self._run("BEGIN IMMEDIATE", body)

    def delete_all(self) -> int:
        def body() -> int:
            # Models and terms first: the delete triggers' per-row work then finds nothing.
            self.conn.execute("DELETE FROM models")
            self.conn.execute(f"DELETE FROM {LEXICAL_TABLE}")
            count = int(self.conn.execute("DELETE FROM vectors").rowcount)
            self.matrices.clear()
            return count

        count = self._run("BEGIN IMMEDIATE", body)
        if self.wide is not None:
            self.wide.clear()
        return count

    # -- reads ----------------------------------------------------------------------------

    def stats(self) -> VectorStoreStats:
        def body() -> VectorStoreStats:
            rows = self.conn.execute(
                "SELECT model_id, count, dim FROM models WHERE count > 0 ORDER BY model_id"
            ).fetchall()
            return VectorStoreStats(
                models=tuple(
                    ModelStats(model_id=str(m), count=int(c), dim=int(d)) for m, c, d in rows
                )
            )

        return self._run("BEGIN", body)

    def search(self, query: FloatMatrix, k: int, where: ScopeFilter) -> list[VectorHit]:
        return self._run("BEGIN", lambda: self._search(query, k, where))

    def lexical_search(self, terms: LexicalTerms, k: int, where: ScopeFilter) -> list[VectorHit]:
        def body() -> list[VectorHit]:
            return [
                VectorHit(
                    message_id=m,
                    session_id=session,
                    timestamp=ts,
                    role=role,
                    model_id=where.model_id,
                    text=text,
                    platform=platform,
                    user_id=user,
                    score=score,
                )
                for m, session, ts, role, text, platform, user, score in lexical_rows(
                    self.conn, terms, k, where
                )
            ]

        return self._run("BEGIN", body)

    def _matrix(self, model_id: str) -> ModelMatrix | None:
        row = self.conn.execute(
            "SELECT dim, count, version FROM models WHERE model_id = ?", (model_id,)
        ).fetchone()
        if row is None or row[1] == 0:
            return None
        dim, count, version = int(row[0]), int(row[1]), int(row[2])
        matrix = self.matrices.get(model_id)
        if matrix is None or matrix.version != version or matrix.size != count:
            from aalis_plugin_vectorstore_sqlite._matrix import ModelMatrix

            matrix = ModelMatrix.load(self.conn, model_id, dim, version)
            self.matrices[model_id] = matrix
        return matrix

    def _search(self, query: FloatMatrix, k: int, where: ScopeFilter) -> list[VectorHit]:
        import numpy as np

        from aalis_plugin_vectorstore_sqlite._matrix import top_k

        matrix = self._matrix(where.model_id)
        if matrix is None:
            return []
        if matrix.dim != len(query):
            raise DimensionMismatch(where.model_id, matrix.dim, len(query))
        if k == 0 or where.is_empty:
            return []
        norm = float(np.linalg.norm(query))
        unit = (query / np.float32(norm)).astype(np.float32) if norm > 0.0 else query
        if where.roles is not None and matrix.roles <= where.roles:
            # Recall asks for the roles it indexes, which are every row of its model: that
            # filter selects nothing out, and reading 100k ids from SQL to apply it cost
            # hundreds of milliseconds (docs/recall.md, "Speed").
            where = attrs.evolve(where, roles=None)
        wide = self._wide_search(matrix, unit, k, where)
        if wide is not None:
            return self._hits(wide[0], wide[1], where.model_id)
        broad = (
            where.session_ids is None
            and where.platform is None
            and where.user_id is None
            and where.roles is None
        )
        if broad:
            excluded = (
                self._candidate_ids(
                    ScopeFilter(model_id=where.model_id, session_ids=where.exclude_session_ids)
                )
                if where.exclude_session_ids
                else np.empty(0, dtype=np.int64)
            )
            positions = matrix.positions(excluded)
            if positions is None:
                raise VectorStoreError("vector matrix out of step with the table; retry")
            in_scope = matrix.size - len(positions)
            if in_scope == 0:
                return []
            scores = matrix.scores(unit)
            if len(positions):
                scores[positions] = -np.inf
            chosen = top_k(scores, min(k, in_scope))[: min(k, in_scope)]
            ids = matrix.ids[chosen]
            picked = scores[chosen]
        else:
            candidates = self._candidate_ids(where)
            if len(candidates) == 0:
                return []
            positions = matrix.positions(candidates)
            if positions is None:
                raise VectorStoreError("vector matrix out of step with the table; retry")
            if len(positions) < _GATHER_SHARE * matrix.size:
                sub = matrix.gather(positions) @ unit
                chosen = top_k(sub, k)
                ids = candidates[chosen]
                picked = sub[chosen]
            else:
                scores = np.full(matrix.size, -np.inf, dtype=np.float32)
                scores[positions] = matrix.gather(positions) @ unit
                chosen = top_k(scores, min(k, len(positions)))[: min(k, len(positions))]
                ids = matrix.ids[chosen]
                picked = scores[chosen]
        return self._hits(ids, picked, where.model_id)

    def _wide_search(
        self, matrix: ModelMatrix, unit: FloatMatrix, k: int, where: ScopeFilter
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        """The approximate index's answer for a wide scope of a large model, or None."""
        import aalis_plugin_vectorstore_sqlite._ann as _ann

        if not self.approximate:
            return None
        if self.wide is None:
            if matrix.size < _ann.MIN_ROWS or not _ann.available():
                return None
            from aalis_plugin_vectorstore_sqlite._wide import WideScopes

            self.wide = WideScopes(self.path)
        if not self.wide.wants(matrix, where):
            return None
        return self.wide.search(self.conn, matrix, unit, k, where)

    def _candidate_ids(self, where: ScopeFilter) -> npt.NDArray[np.int64]:
        """Row ids in scope, ascending, selected by SQL (the filter lives in the query)."""
        import numpy as np

        clause, params = scope_clause(self.conn, where)
        sql = f"SELECT id FROM vectors WHERE {clause} ORDER BY id"
        rows = self.conn.execute(sql, params).fetchall()
        return np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))

    def _hits(
        self, ids: npt.NDArray[np.int64], scores: npt.NDArray[np.floating[Any]], model_id: str
    ) -> list[VectorHit]:
        if len(ids) == 0:
            return []
        wanted = [int(i) for i in ids]
        fields: dict[int, tuple[int, str, int, str, str, str | None, str | None, str]] = {}
        for start in range(0, len(wanted), MAX_INLINE):
            chunk = wanted[start : start + MAX_INLINE]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                "SELECT id, session_id, timestamp, role, text, platform, user_id, message_id "
                f"FROM vectors WHERE id IN ({marks})",
                chunk,
            ):
                fields[int(row[0])] = row
        hits: list[VectorHit] = []
        for row_id, score in zip(wanted, scores.tolist(), strict=True):
            row = fields[row_id]
            hits.append(
                VectorHit(
                    message_id=row[7],
                    session_id=row[1],
                    timestamp=int(row[2]),
                    role=row[3],
                    model_id=model_id,
                    text=row[4],
                    platform=row[5],
                    user_id=row[6],
                    score=float(min(1.0, max(-1.0, score))),
                )
            )
        return hits


__all__ = ["Engine", "PreparedBatch", "as_float32", "prepare"]
