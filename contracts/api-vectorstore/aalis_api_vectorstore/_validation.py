"""Argument checks every store runs before touching its data, so bad input fails the same
way on every backend and changes nothing."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from aalis_api_vectorstore._errors import DimensionMismatch
from aalis_api_vectorstore._types import ScopeFilter, VectorRecord


def check_k(k: object) -> int:
    """``k`` when it is a non-negative int; ``ValueError`` for bool, negative or fractional
    numbers, ``TypeError`` for anything else."""
    if isinstance(k, bool):
        raise ValueError("k must be a non-negative int, got a bool")
    if isinstance(k, float):
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    if not isinstance(k, int):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if k < 0:
        raise ValueError(f"k must be a non-negative int, got {k}")
    return k


def check_where(where: object) -> ScopeFilter:
    if not isinstance(where, ScopeFilter):
        raise TypeError(
            f"where must be a ScopeFilter (searches are always scoped), got {type(where).__name__}"
        )
    return where


def check_session_id(session_id: object) -> str:
    if not isinstance(session_id, str):
        raise TypeError(f"session_id must be a str, got {type(session_id).__name__}")
    return session_id


def check_timestamps(timestamps: object) -> list[int] | None:
    """The timestamps as a de-duplicated list, or None for "all of the session"."""
    if timestamps is None:
        return None
    if isinstance(timestamps, str | bytes | Mapping) or not isinstance(timestamps, Iterable):
        raise TypeError(f"timestamps must be an iterable of int, got {type(timestamps).__name__}")
    out: list[int] = []
    for value in timestamps:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"timestamps must be ints (epoch ms), got {type(value).__name__}")
        out.append(value)
    return sorted(set(out))


def check_ids(ids: object) -> list[str] | None:
    """Message ids as a de-duplicated sorted list, or None (not given)."""
    if ids is None:
        return None
    if isinstance(ids, str | bytes | Mapping) or not isinstance(ids, Iterable):
        raise TypeError(
            f"ids must be an iterable of str, got {type(ids).__name__} "
            "(a single str would be read as its characters)"
        )
    out: list[str] = []
    for value in ids:
        if not isinstance(value, str):
            raise TypeError(f"ids must be str message ids, got {type(value).__name__}")
        out.append(value)
    return sorted(set(out))


def check_delete(
    session_id: object, ids: object, timestamps: object
) -> tuple[str, list[str] | None, list[int] | None]:
    """The checked arguments of ``delete``: ids or timestamps, never both."""
    session_id = check_session_id(session_id)
    wanted_ids = check_ids(ids)
    wanted_ts = check_timestamps(timestamps)
    if wanted_ids is not None and wanted_ts is not None:
        raise ValueError("delete takes ids or timestamps, not both")
    return session_id, wanted_ids, wanted_ts


def check_records(records: object) -> list[VectorRecord]:
    if isinstance(records, str | bytes | Mapping) or not isinstance(records, Sequence):
        raise TypeError(f"records must be a sequence of VectorRecord, got {type(records).__name__}")
    for index, record in enumerate(records):
        if not isinstance(record, VectorRecord):
            raise TypeError(f"records[{index}] must be a VectorRecord, got {type(record).__name__}")
    return list(records)


def batch_dims(records: Sequence[VectorRecord]) -> dict[str, int]:
    """``model_id -> dim`` of a batch; ``DimensionMismatch`` when one model comes in two widths."""
    dims: dict[str, int] = {}
    for record in records:
        width = len(record.vector)
        known = dims.setdefault(record.model_id, width)
        if known != width:
            raise DimensionMismatch(record.model_id, known, width)
    return dims


def check_dims(batch: Mapping[str, int], stored: Mapping[str, int]) -> None:
    """``DimensionMismatch`` when a batch's width differs from the stored one of its model."""
    for model_id, width in batch.items():
        known = stored.get(model_id)
        if known is not None and known != width:
            raise DimensionMismatch(model_id, known, width)


def float_row(vector: object, *, what: str = "vector") -> tuple[float, ...]:
    """A vector as a tuple of finite floats, in pure Python (the reference store's check)."""
    if isinstance(vector, str | bytes | Mapping) or not isinstance(vector, Iterable):
        raise TypeError(f"{what} must be a sequence of floats, got {type(vector).__name__}")
    row: list[float] = []
    for value in vector:
        if isinstance(value, bool):
            raise TypeError(f"{what} holds a bool, not a float")
        if not isinstance(value, int | float):
            try:
                value = float(value)  # numpy scalars
            except (TypeError, ValueError):
                raise TypeError(f"{what} holds a {type(value).__name__}, not a float") from None
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{what} holds a NaN or infinite value")
        row.append(number)
    if not row:
        raise ValueError(f"{what} must not be empty")
    return tuple(row)


__all__ = [
    "batch_dims",
    "check_delete",
    "check_dims",
    "check_ids",
    "check_k",
    "check_records",
    "check_session_id",
    "check_timestamps",
    "check_where",
    "float_row",
]
