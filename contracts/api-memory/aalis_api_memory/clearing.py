"""Clearing: the request every ``memory_clear`` middleware sees, its result rows, clear types.

A clear is one request passed through an onion of middleware (one per plugin that owns data)
with the history clear as the innermost action. Each participant reports what it did as a
``ClearResult`` row, so the initiator (the CLI, a chat command) can show one line per plugin
and decide whether the user's history really went away (``history_cleared``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs

Scope = Literal["session", "all"]
SCOPES: frozenset[str] = frozenset({"session", "all"})

#: The clear type the memory backends contribute: the message history itself.
CONTEXT = "context"
#: Spellings users type for ``context``.
ALIASES: dict[str, str] = {"history": CONTEXT, "messages": CONTEXT}
#: Asking for this type means "every type", i.e. ``types=None``.
ALL_TYPES = "all"


@attrs.frozen
class TextRef:
    """Translatable text: an i18n ``key`` plus the ``fallback`` shown when no catalogue has it.

    ``str()`` gives the fallback, so a caller that does not translate can print it as is.
    """

    key: str = attrs.field(validator=attrs.validators.instance_of(str))
    fallback: str = attrs.field(validator=attrs.validators.instance_of(str))

    def __str__(self) -> str:
        return self.fallback


Text = str | TextRef


def _check_text(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, (str, TextRef)):
        raise TypeError(f"{attribute.name} must be a str or TextRef, got {type(value).__name__}")


def _check_type_id(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"clear type id must be a str, got {type(value).__name__}")
    if not value or "/" in value:
        raise ValueError(f"clear type id must be non-empty and contain no '/', got {value!r}")


@attrs.frozen
class ClearType:
    """Something a plugin can clear, offered to users by ``aalis clear -t <id>``."""

    id: str = attrs.field(validator=_check_type_id)
    label: Text = attrs.field(validator=_check_text)


@attrs.frozen
class ClearResult:
    """One participant's report. ``message`` says success or failure on its own."""

    source: str = attrs.field(validator=attrs.validators.instance_of(str))
    success: bool = attrs.field(validator=attrs.validators.instance_of(bool))
    message: Text = attrs.field(validator=_check_text)
    type: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )


def _check_scope(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in SCOPES:
        raise ValueError(f"clear scope must be 'session' or 'all', got {value!r}")


def _types_list(value: Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise TypeError("clear types must be a list of str, not a single string")
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"clear types must be str, got {item!r}")
    return items


@attrs.define(kw_only=True)
class ClearRequest:
    """What every ``memory_clear`` middleware receives; it appends its rows to ``results``.

    ``types`` None means "everything"; otherwise only the listed clear type ids are wanted
    (aliases already resolved). ``session_id`` is set exactly when ``scope`` is "session".
    """

    scope: Scope = attrs.field(validator=_check_scope)
    types: list[str] | None = attrs.field(default=None, converter=_types_list)
    session_id: str | None = attrs.field(default=None)
    results: list[ClearResult] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        if self.scope == "session" and not isinstance(self.session_id, str):
            raise TypeError("a session-scope clear needs a str session_id")
        if self.scope == "all" and self.session_id is not None:
            raise ValueError("an all-scope clear takes no session_id")

    def wants(self, type_id: str) -> bool:
        """True when this clear covers ``type_id`` (every type when ``types`` is None)."""
        return self.types is None or type_id in self.types

    def report(self, source: str, success: bool, message: Text, type: str | None = None) -> None:
        """Append a row; shorthand for ``results.append(ClearResult(...))``."""
        self.results.append(ClearResult(source, success, message, type))


class UnknownClearType(ValueError):
    """A clear asked for a type no active plugin contributes; ``known`` lists the valid ids."""

    def __init__(self, unknown: Sequence[str], known: Sequence[str]) -> None:
        self.unknown = list(unknown)
        self.known = list(known)
        listed = ", ".join(self.known) if self.known else "none"
        super().__init__(f"unknown clear type(s): {', '.join(self.unknown)} (known: {listed})")


def history_cleared(request: ClearRequest) -> bool:
    """True when the clear covered the history and every ``context`` row succeeded.

    A clear that did not ask for ``context``, or that nobody answered for it, did not clear
    the history, so a caller must not tell the user it did.
    """
    if not request.wants(CONTEXT):
        return False
    rows = [row for row in request.results if row.type == CONTEXT]
    return bool(rows) and all(row.success for row in rows)


__all__ = [
    "ALIASES",
    "ALL_TYPES",
    "CONTEXT",
    "SCOPES",
    "ClearRequest",
    "ClearResult",
    "ClearType",
    "Scope",
    "Text",
    "TextRef",
    "UnknownClearType",
    "history_cleared",
]
