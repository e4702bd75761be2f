"""A session's full history as the page draws it: every message with the state it is in.

States: ``active`` (the model sees it), ``kept`` (inside the span a summary covers but kept
verbatim), ``summarised`` (archived, covered by the summary), ``archived`` (archived but not
inside the current summary's range, e.g. after the summary was cleared), and ``divider`` (an
event marker such as a compression divider, never sent to a model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from aalis_api_memory import StoredMessage, SummaryRecord
from aalis_schema_message import CONTROL_KINDS

State = Literal["active", "kept", "summarised", "archived", "divider"]


def _covered(record: SummaryRecord | None, timestamp: int | None) -> bool:
    if record is None or timestamp is None or record.covered_to is None:
        return False
    start = record.covered_from if record.covered_from is not None else timestamp
    return start <= timestamp <= record.covered_to


def state_of(stored: StoredMessage, summary: SummaryRecord | None) -> State:
    message = stored.message
    if message.kind in CONTROL_KINDS:
        return "divider"
    covered = _covered(summary, message.timestamp)
    if stored.archived:
        return "summarised" if covered else "archived"
    return "kept" if covered else "active"


def summary_json(record: SummaryRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "text": record.text,
        "covered_from": record.covered_from,
        "covered_to": record.covered_to,
        "updated_at": record.updated_at,
        "model": record.model,
    }


def timeline(
    stored: Sequence[StoredMessage], summary: SummaryRecord | None, limit: int
) -> dict[str, Any]:
    """The newest ``limit`` entries with their states, and counts over the whole session."""
    states = [state_of(item, summary) for item in stored]
    counts: dict[str, int] = {}
    for state in states:
        counts[state] = counts.get(state, 0) + 1
    start = max(0, len(stored) - limit)
    items = [
        {"state": state, "message": item.message.to_json()}
        for item, state in zip(stored[start:], states[start:], strict=True)
    ]
    return {
        "summary": summary_json(summary),
        "counts": counts,
        "total": len(stored),
        "truncated": start > 0,
        "items": items,
    }


__all__ = ["State", "state_of", "summary_json", "timeline"]
