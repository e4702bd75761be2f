"""Who speaks in a session, and forgetting one of them from the page.

A session's messages name their speakers (``metadata["platform"]`` and ``["user_id"]``, see
docs/reference/turn.md), so the page can offer "Forget this person" for each. Forgetting
is the memory contract's ``forget_person(host, person)``: every layer erases what it holds
of the person. The serve plugin looks that function up by name when a request comes, so it
works with a contract that has it and answers 501 (not implemented) with a clear message
with one that does not yet. See docs/host/serve.md.
"""

from __future__ import annotations

import importlib
import inspect
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from aalis_api_memory import Person
from aalis_schema_message import Message

from aalis_core.errors import AalisError

#: Where ``forget_person`` lives: ``aalis_api_memory.forget_person``.
FORGET_MODULE = "aalis_api_memory"
FORGET_FUNCTION = "forget_person"


class ForgetUnavailable(AalisError, LookupError):
    """The installed memory contract has no ``forget_person``."""


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


def forget_function() -> Callable[..., Any]:
    """``aalis_api_memory.forget_person``, or ``ForgetUnavailable`` saying it is missing."""
    try:
        module = importlib.import_module(FORGET_MODULE)
    except ImportError as exc:  # pragma: no cover - the contract is a dependency
        raise ForgetUnavailable(f"cannot import {FORGET_MODULE}: {exc}") from None
    function = getattr(module, FORGET_FUNCTION, None)
    if not callable(function):
        raise ForgetUnavailable(
            f"forgetting a person is not available: the installed memory contract "
            f"({FORGET_MODULE}) has no {FORGET_FUNCTION}(); update aalis-api-memory"
        )
    return function  # type: ignore[no-any-return]


def parse_person(raw: object) -> Person:
    """A request's ``person``: ``"PLATFORM:USER_ID"`` or ``{"platform", "user_id"}``."""
    if isinstance(raw, str):
        return Person.parse(raw)
    if isinstance(raw, dict) and set(raw) == {"platform", "user_id"}:
        platform, user_id = raw["platform"], raw["user_id"]
        if isinstance(platform, str) and isinstance(user_id, str):
            return Person(platform, user_id)
    raise ValueError('person must be "PLATFORM:USER_ID" or {"platform": ..., "user_id": ...}')


async def run_forget(host: Any, person: Person) -> list[dict[str, Any]]:
    """Call ``forget_person(host, person)`` and return its result rows as JSON."""
    result = forget_function()(host, person)
    if inspect.isawaitable(result):
        result = await result
    return rows_json(result)


def rows_json(result: Any) -> list[dict[str, Any]]:
    """``forget_person``'s rows (objects with ``source``, ``success``, ``type``,
    ``message``, as ``run_clear``'s) as JSON; anything else becomes one row."""
    if isinstance(result, (list, tuple)):
        return [_row(row) for row in result]
    return [{"source": FORGET_FUNCTION, "success": True, "type": None, "message": str(result)}]


def _row(row: Any) -> dict[str, Any]:
    message = getattr(row, "message", "")
    kind = getattr(row, "type", None)
    return {
        "source": str(getattr(row, "source", FORGET_FUNCTION)),
        "success": bool(getattr(row, "success", True)),
        "type": None if kind is None else str(kind),
        "message": str(getattr(message, "fallback", message)),
    }


__all__ = [
    "FORGET_FUNCTION",
    "FORGET_MODULE",
    "ForgetUnavailable",
    "forget_function",
    "parse_person",
    "persons_of",
    "rows_json",
    "run_forget",
]
