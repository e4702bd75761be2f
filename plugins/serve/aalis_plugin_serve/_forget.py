"""Who speaks in a session, and forgetting one of them from the page.

A session's messages name their speakers (``metadata["platform"]`` and ``["user_id"]``, see
docs/reference/turn.md), so the page can offer "Forget this person" for each. Forgetting
is the agent runtime's ``forget_person(host, person)``: every layer erases what it holds
of the person, and the page shows one row per layer with its counts. See docs/host/serve.md
and docs/host/privacy.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from aalis_agent import forget_person
from aalis_api_memory import ForgetResult, Person
from aalis_schema_message import Message

from aalis_core import HostServices


def persons_of(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Every person who wrote in ``messages`` with their message count, most messages
    first (then by name): ``[{"person", "platform", "user_id", "messages"}]``."""
    counts: Counter[Person] = Counter()
    for message in messages:
        person = Person.from_metadata(message.metadata)
        if person is not None:
            counts[person] += 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    return [
        {
            "person": str(person),
            "platform": person.platform,
            "user_id": person.user_id,
            "messages": count,
        }
        for person, count in ordered
    ]


def parse_person(raw: object) -> Person:
    """A request's ``person``: ``"PLATFORM:USER_ID"`` or ``{"platform", "user_id"}``."""
    if isinstance(raw, str):
        return Person.parse(raw)
    if isinstance(raw, dict) and set(raw) == {"platform", "user_id"}:
        platform, user_id = raw["platform"], raw["user_id"]
        if isinstance(platform, str) and isinstance(user_id, str):
            return Person(platform, user_id)
    raise ValueError('person must be "PLATFORM:USER_ID" or {"platform": ..., "user_id": ...}')


async def run_forget(host: HostServices, person: Person) -> list[dict[str, Any]]:
    """Forget ``person`` everywhere and return the rows, one per layer, as JSON."""
    return rows_json(await forget_person(host, person))


def rows_json(rows: Sequence[ForgetResult]) -> list[dict[str, Any]]:
    """``forget_person``'s rows as JSON: ``{source, success, message, counts}``."""
    return [
        {
            "source": row.source,
            "success": row.success,
            "message": str(getattr(row.message, "fallback", row.message)),
            "counts": dict(row.counts),
        }
        for row in rows
    ]


__all__ = [
    "parse_person",
    "persons_of",
    "rows_json",
    "run_forget",
]
