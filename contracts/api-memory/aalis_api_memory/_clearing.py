"""Clearing: the request every ``memory_clear`` middleware sees, its result rows, clear types.

``run_clear`` (in ``aalis_agent``) is the initiator. A clear is one request passed through an onion of middleware (one per plugin that owns data)
with the history clear as the innermost action. Each participant reports what it did as a
``ClearResult`` row, so the initiator (the CLI, a chat command) can show one line per plugin
and decide whether the user's history really went away (``history_cleared``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

import attrs

from aalis_api_memory._errors import AalisMemoryError
from aalis_api_memory._service import MemoryService, MetadataKeys, supports
from aalis_api_memory._types import Delete
from aalis_api_memory._validation import check_namespace

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


class _Logger(Protocol):
    def info(self, event: str, **fields: Any) -> None: ...


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


#: What every memory backend contributes: the message history, cleared by ``run_clear``'s
#: default action. One shared value, so all backends offer the same id and label.
CONTEXT_CLEAR_TYPE = ClearType(CONTEXT, TextRef("memory.clear.context", "Conversation history"))


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


class UnknownClearType(AalisMemoryError, ValueError):
    """A clear asked for a type no active plugin contributes; ``known`` lists the valid ids."""

    def __init__(self, unknown: Sequence[str], known: Sequence[str]) -> None:
        self.unknown = list(unknown)
        self.known = list(known)
        listed = ", ".join(self.known) if self.known else "none"
        super().__init__(f"unknown clear type(s): {', '.join(self.unknown)} (known: {listed})")


def history_cleared(request: ClearRequest | Sequence[ClearResult]) -> bool:
    """True when the clear covered the history and every ``context`` row succeeded.

    A clear that did not ask for ``context``, or that nobody answered for it, did not clear
    the history, so a caller must not tell the user it did. Given the rows ``run_clear``
    returned instead of the request, the row conditions alone decide (a clear that did not
    cover ``context`` has no ``context`` row).
    """
    if isinstance(request, ClearRequest):
        if not request.wants(CONTEXT):
            return False
        results: Sequence[ClearResult] = request.results
    else:
        results = request
    rows = [row for row in results if row.type == CONTEXT]
    return bool(rows) and all(row.success for row in rows)


def resolve_types(types: Iterable[str] | None) -> list[str] | None:
    """Apply the aliases: ``history``/``messages`` -> ``context``; ``all`` -> every type.

    Order is kept and duplicates are dropped, so result rows follow what the user typed.
    """
    if types is None:
        return None
    if isinstance(types, (str, bytes)):
        raise TypeError("clear types must be a list of str, not a single string")
    resolved: list[str] = []
    for item in types:
        if not isinstance(item, str):
            raise TypeError(f"clear types must be str, got {item!r}")
        if item == ALL_TYPES:
            return None
        item = ALIASES.get(item, item)
        if item not in resolved:
            resolved.append(item)
    return resolved


async def clear_metadata_namespaces(
    memory: MemoryService, namespaces: Iterable[str], logger: _Logger
) -> list[list[str]]:
    """Delete every entry of ``namespaces`` in ONE ``commit_metadata``.

    See docs/reference/memory-contract.md (clearing).

    For plugins whose data is cross-session metadata (a clear of scope ``all``). Returns
    the deleted keys per namespace, in input order. With ``list_metadata_keys`` the
    unreadable entries go too, and one info line names them (``namespace/key``, the first
    10 when there are more); without it only readable entries (``list_metadata``) are
    found, and unreadable ones stay. Nothing to delete means no commit at all.
    """
    if isinstance(namespaces, (str, bytes)):
        raise TypeError("namespaces must be a list of str, not a single string")
    names = [check_namespace(namespace) for namespace in namespaces]
    deleted: list[list[str]] = []
    unreadable: list[str] = []
    ops: list[Delete] = []
    for namespace in names:
        readable = [entry.key for entry in await memory.list_metadata(namespace)]
        if supports(memory, MetadataKeys, "list_metadata_keys"):
            keys = list(await memory.list_metadata_keys(namespace))
            known = set(readable)
            unreadable += [f"{namespace}/{key}" for key in keys if key not in known]
        else:
            keys = readable
        deleted.append(keys)
        ops += [Delete(namespace, key) for key in keys]
    if ops:
        await memory.commit_metadata(ops)
    if unreadable:
        shown = unreadable[:UNREADABLE_SHOWN]
        logger.info(
            "deleted unreadable metadata entries",
            entries=shown,
            count=len(unreadable),
            more=len(unreadable) - len(shown),
        )
    return deleted


#: How many unreadable entries ``clear_metadata_namespaces`` names in its log line.
UNREADABLE_SHOWN = 10


__all__ = [
    "ALIASES",
    "ALL_TYPES",
    "CONTEXT",
    "CONTEXT_CLEAR_TYPE",
    "SCOPES",
    "ClearRequest",
    "ClearResult",
    "ClearType",
    "Scope",
    "Text",
    "TextRef",
    "UnknownClearType",
    "clear_metadata_namespaces",
    "history_cleared",
    "resolve_types",
]
