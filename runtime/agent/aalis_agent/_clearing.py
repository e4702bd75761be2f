"""``run_clear``: the one initiator of a clear, and the innermost action (the history).

The value types every ``memory_clear`` middleware sees (``ClearRequest``, ``ClearResult``,
``ClearType``) are the memory contract's; running the chain is the agent runtime's job, so a
backend author never depends on it (docs/reference/memory-contract.md, clearing).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING, cast

from aalis_api_memory import (
    CONTEXT,
    SCOPES,
    ClearAll,
    ClearRequest,
    ClearResult,
    ClearType,
    Holding,
    MemoryService,
    Scope,
    TextRef,
    Transfer,
    UnknownClearType,
    check_session_id,
    resolve_types,
    supports,
)

from aalis_core import HostServices, describe, redact

if TYPE_CHECKING:
    from aalis_core import Capability, Handle

    #: What ``run_clear`` takes as ``memory``: a handle on the capability, or a store.
    MemoryTarget = Handle[MemoryService] | MemoryService


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
    from aalis_api_memory import memory

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


__all__ = ["clear_types", "memory_capability", "run_clear"]
