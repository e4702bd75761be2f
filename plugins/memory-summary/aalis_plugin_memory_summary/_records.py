"""How summaries and per-session lines are kept in the memory's metadata store.

Both live in metadata (not in a file of this plugin) so that they follow the conversation:
the same backend, the same export/migrate, the same clear orchestration. Reading is lenient:
an entry that does not have the expected shape reads as absent (and is overwritten by the
next compression) instead of breaking every compression of that session.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
from aalis_api_memory import SummaryRecord

#: Namespace of the summaries (key: session id); cleared by clear type ``summary``.
SUMMARY_NAMESPACE = "summary"
#: Namespace of per-session line overrides (key: session id); settings, not cleared.
LINES_NAMESPACE = "summary-lines"
#: Namespace of the ids a commit is archiving (key: the summary's revision). An entry
#: outlives its commit only when the commit stopped between writing the summary and
#: finishing the archive; the next compression archives those ids as already summarised.
PENDING_NAMESPACE = "summary-pending"
RECORD_VERSION = 1


def _opt_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def record_to_json(record: SummaryRecord, *, revision: str | None = None) -> dict[str, Any]:
    """The stored form; ``revision`` names this write (the pending entry is keyed by it)."""
    data: dict[str, Any] = {
        "version": RECORD_VERSION,
        "text": record.text,
        "covered_from": record.covered_from,
        "covered_to": record.covered_to,
        "updated_at": record.updated_at,
        "model": record.model,
    }
    if revision is not None:
        data["revision"] = revision
    return data


def revision_of(data: dict[str, Any] | None) -> str | None:
    revision = data.get("revision") if isinstance(data, dict) else None
    return revision if isinstance(revision, str) and revision else None


def pending_to_json(session_id: str, ids: list[str]) -> dict[str, Any]:
    return {"session_id": session_id, "ids": list(ids)}


def pending_ids(data: dict[str, Any] | None, session_id: str) -> frozenset[str]:
    """The ids of a pending entry, when it is one of ``session_id``'s; else nothing."""
    if not isinstance(data, dict) or data.get("session_id") != session_id:
        return frozenset()
    ids = data.get("ids")
    if not isinstance(ids, list):
        return frozenset()
    return frozenset(item for item in ids if isinstance(item, str) and item)


def record_from_json(data: dict[str, Any] | None) -> SummaryRecord | None:
    """The stored summary, or None when absent or not shaped like one."""
    if not isinstance(data, dict):
        return None
    text = data.get("text")
    updated_at = _opt_int(data.get("updated_at"))
    model = data.get("model")
    if not isinstance(text, str) or not text or updated_at is None or not isinstance(model, str):
        return None
    return SummaryRecord(
        text=text,
        covered_from=_opt_int(data.get("covered_from")),
        covered_to=_opt_int(data.get("covered_to")),
        updated_at=updated_at,
        model=model,
    )


@attrs.frozen
class LineOverrides:
    """A session's own lines; None means "not overridden"."""

    compress_at: float | None = None
    history_limit: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.compress_at is not None:
            out["compress_at"] = self.compress_at
        if self.history_limit is not None:
            out["history_limit"] = self.history_limit
        return out


def overrides_from_json(data: dict[str, Any] | None) -> LineOverrides:
    """Stored overrides; a value of the wrong type or range is ignored."""
    if not isinstance(data, dict):
        return LineOverrides()
    compress_at = data.get("compress_at")
    if (
        isinstance(compress_at, bool)
        or not isinstance(compress_at, int | float)
        or math.isnan(compress_at)
        or not 0 <= compress_at <= 1
    ):
        compress_at = None
    history_limit = _opt_int(data.get("history_limit"))
    if history_limit is not None and history_limit < 0:
        history_limit = None
    return LineOverrides(
        compress_at=float(compress_at) if compress_at is not None else None,
        history_limit=history_limit,
    )


__all__ = [
    "LINES_NAMESPACE",
    "PENDING_NAMESPACE",
    "SUMMARY_NAMESPACE",
    "LineOverrides",
    "overrides_from_json",
    "pending_ids",
    "pending_to_json",
    "record_from_json",
    "record_to_json",
    "revision_of",
]
