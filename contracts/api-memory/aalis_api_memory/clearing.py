"""Clearing: the request every ``memory_clear`` middleware sees, its result rows, clear types.

A clear is one request passed through an onion of middleware (one per plugin that owns data)
with the history clear as the innermost action. Each participant reports what it did as a
``ClearResult`` row, so the initiator (the CLI, a chat command) can show one line per plugin
and decide whether the user's history really went away (``history_cleared``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import attrs

from aalis_api_memory.errors import AalisMemoryError
from aalis_api_memory.holds import Holding
from aalis_api_memory.service import ClearAll, MemoryService, MetadataKeys, Transfer, supports
from aalis_api_memory.types import Delete
from aalis_api_memory.validation import check_namespace, check_session_id
from aalis_core.containment import describe
from aalis_core.host_services import HostServices
from aalis_core.redaction import redact

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

if TYPE_CHECKING:
    from aalis_core.capability import Capability
    from aalis_core.handles import Handle

    #: What ``run_clear`` takes as ``memory``: a handle on the capability, or a store.
    MemoryTarget = Handle[MemoryService] | MemoryService


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


def clear_types(host: HostServices) -> list[ClearType]:
    """Every clear type active plugins contribute, in collection order, one per id."""
    return [item for _, item in host.collect_contributions("memory_clear_types")]


async def run_clear(
    host: HostServices,
    scope: Scope,
    session_id: str | None = None,
    types: Iterable[str] | None = None,
    memory: MemoryTarget | None = None,
) -> list[ClearResult]:
    """Clear one session (``scope="session"``) or everything (``"all"``).

    The rules are in docs/reference/memory-contract.md (clearing).

    The one initiator of a clear (``aalis clear``, a chat's ``/clear``, a session deletion).
    ``types`` None means every type; aliases are resolved here and an unknown type raises
    ``UnknownClearType`` before anything happens. ``memory`` is the handle whose provider
    holds the history (default: the host's own handle); the cleared sessions are *held*
    on that provider while the ``memory_clear`` chain runs, so a message saved meanwhile
    by anyone waits and lands after the clear.

    Returns the result rows: one per participant and type, a failure row
    (``source="aalis"``) for every explicitly requested type nobody answered, and a
    failure row (``source=<plugin>``, ``type=None``) for a middleware that raised.

    **[decided]** ``history_changed`` is emitted once the chain is done and only when the
    history was (at least partly) cleared: for a session scope, for that session; for scope
    ``all``, once per session the backend listed (``list_sessions``) just before the clear.
    A backend without ``list_sessions`` gives no session ids to name, so none is emitted.
    """
    if scope not in SCOPES:
        raise ValueError(f"clear scope must be 'session' or 'all', got {scope!r}")
    if scope == "session":
        session_id = check_session_id(session_id)
    elif session_id is not None:
        raise ValueError("an all-scope clear takes no session_id")
    wanted = resolve_types(types)
    if wanted is not None:
        known = [item.id for item in clear_types(host)]
        unknown = [item for item in wanted if item not in known]
        if unknown:
            raise UnknownClearType(unknown, known)

    handle = host.capability(memory_capability()) if memory is None else memory
    service = _service(handle)
    request = ClearRequest(scope=scope, types=wanted, session_id=session_id)

    async def clear_history() -> None:
        if request.wants(CONTEXT):
            await _clear_history(service, request)

    def failed(plugin: str, exc: BaseException) -> None:
        # The host's runner says "timed out after N s" or "SystemExit: 3" on its own.
        request.report(plugin, False, redact(describe(exc)))

    before: list[str] = []
    async with _hold(service, None if scope == "all" else [request.session_id or ""]):
        if (
            scope == "all"
            and request.wants(CONTEXT)
            and supports(service, Transfer, "list_sessions")
        ):
            before = [info.session_id for info in await service.list_sessions()]
        await host.run_middleware("memory_clear", request, clear_history, failed)

    answered = {row.type for row in request.results}
    for type_id in request.types or ():
        if type_id not in answered:
            request.report(
                "aalis",
                False,
                TextRef("aalis.clear.unhandled", f"no enabled plugin handles {type_id}"),
                type_id,
            )

    if any(row.type == CONTEXT and row.success for row in request.results):
        changed = [session_id or ""] if scope == "session" else before
        # One wait for every session's event: a slow listener holds the caller at most
        # [host] hook_timeout, however many sessions a clear of everything touched.
        if callable(getattr(host, "emit_each", None)):
            await host.emit_each("history_changed", [{"session_id": sid} for sid in changed])
        else:
            for sid in changed:
                await host.emit("history_changed", session_id=sid)
    return request.results


def memory_capability() -> Capability[MemoryService]:
    # Imported late: capabilities imports holds, and holds nothing of this module, but
    # keeping clearing importable without the capability machinery keeps it light.
    from aalis_api_memory.capabilities import memory

    return memory


def _service(handle: MemoryTarget | None) -> MemoryService | None:
    """The ``MemoryService`` behind a handle (None when absent), or ``handle`` itself."""
    if hasattr(handle, "present") and hasattr(handle, "capability"):
        bound = cast("Handle[MemoryService]", handle)
        return bound.use if bound.present else None
    return cast("MemoryService | None", handle)


def _hold(service: object, session_ids: list[str] | None) -> AbstractAsyncContextManager[None]:
    if supports(service, Holding):
        return service.hold(session_ids)
    return nullcontext()


async def _clear_history(service: MemoryService | None, request: ClearRequest) -> None:
    """The innermost action: clear the history and report it as source ``memory``."""
    if service is None:
        request.report(
            "memory",
            False,
            TextRef("memory.clear.absent", "no memory backend is active; history not cleared"),
            CONTEXT,
        )
        return
    try:
        if request.scope == "session":
            await service.clear_session(request.session_id or "")
            done = TextRef("memory.clear.session", "conversation history cleared")
        elif supports(service, ClearAll):
            await service.clear_all()
            done = TextRef("memory.clear.all", "every conversation history cleared")
        elif supports(service, Transfer, "list_sessions"):
            for info in await service.list_sessions():
                await service.clear_session(info.session_id)
            done = TextRef("memory.clear.all", "every conversation history cleared")
        else:
            request.report(
                "memory",
                False,
                TextRef(
                    "memory.clear.unsupported",
                    "this memory backend cannot clear all sessions (no clear_all)",
                ),
                CONTEXT,
            )
            return
    except Exception as exc:
        request.report("memory", False, f"clearing the history failed: {_error_text(exc)}", CONTEXT)
        return
    request.report("memory", True, done, CONTEXT)


def _error_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
    "clear_types",
    "history_cleared",
    "resolve_types",
    "run_clear",
]
