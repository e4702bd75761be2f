"""The engine's RAM matrices kept in step with its own writes, inside the write's transaction.

A matrix is current when its version and size are the model's as the write began (the
``models`` row, which per-row triggers bump); only then can the write be applied to it: the
rows the write removes (a delete, or the old rows of a replacement) are dropped in place, the
rows it inserts appended, and the matrix takes the model's new version. A matrix that was
already behind (another process wrote), or that lacks a row it should drop, is forgotten
instead, and the next search reloads it. Without this, every delete made the next search
re-read the whole model: minutes at ten million rows (docs/recall.md, "Ten million vectors").
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aalis_plugin_vectorstore_sqlite._matrix import FloatMatrix, ModelMatrix

#: model_id -> (version, count) of the ``models`` row.
State = dict[str, tuple[int, int]]


def state(conn: sqlite3.Connection, models: Sequence[str]) -> State:
    """The ``models`` rows of ``models`` now (absent ones left out)."""
    if not models:
        return {}
    marks = ",".join("?" * len(models))
    return {
        str(m): (int(v), int(c))
        for m, v, c in conn.execute(
            f"SELECT model_id, version, count FROM models WHERE model_id IN ({marks})",
            list(models),
        )
    }


def removing(
    conn: sqlite3.Connection, where: str, params: Sequence[object]
) -> list[tuple[int, str]]:
    """The rows (id, model) a ``DELETE FROM vectors WHERE <where>`` is about to remove: read
    once, for the approximate indexes and for the matrices alike."""
    return [
        (int(row_id), str(model_id))
        for row_id, model_id in conn.execute(
            f"SELECT id, model_id FROM vectors WHERE {where}", params
        )
    ]


def apply(
    conn: sqlite3.Connection,
    matrices: dict[str, ModelMatrix],
    before: State,
    removed: Mapping[str, list[int]],
    appended: Mapping[str, FloatMatrix] | None = None,
    max_id: int = 0,
    reading: set[str] | frozenset[str] = frozenset(),
) -> None:
    """Bring ``matrices`` through this write (see the module): drop ``removed`` ids, append
    ``appended`` rows (inserted with ids past ``max_id``, in order); forget what cannot be.
    ``reading``: models whose rows a background index build is reading; rows are never
    moved under it (the matrix is forgotten instead, as before this module existed)."""
    appended = appended or {}
    for model_id in {*removed, *appended} & set(matrices):
        matrix = matrices[model_id]
        prior = before.get(model_id)
        stuck = bool(removed.get(model_id)) and model_id in reading
        if prior is None or (matrix.version, matrix.size) != prior or stuck:
            del matrices[model_id]
            continue
        if not matrix.remove(removed.get(model_id, [])):
            del matrices[model_id]
            continue
        if model_id in appended:
            added = conn.execute(
                "SELECT id, role FROM vectors WHERE id > ? AND model_id = ? ORDER BY id",
                (max_id, model_id),
            ).fetchall()
            matrix.append([int(r[0]) for r in added], appended[model_id], [r[1] for r in added])
        now = state(conn, [model_id]).get(model_id)
        if now is None or now[1] != matrix.size:
            del matrices[model_id]
            continue
        matrix.version = now[0]


__all__: list[str] = []
