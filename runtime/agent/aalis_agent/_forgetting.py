"""``forget_person``: erase one person everywhere, through the ``memory_forget`` chain.

The request and result rows are the memory contract's (plugins join the chain with them);
running the chain, and the innermost action on the store, are the agent runtime's. What is
removed, and what a model may still repeat, is in docs/host/privacy.md.

The innermost action finds the person through the ``Transfer`` group (``list_sessions`` +
``export_session``): every session is read once, archived messages included. That is a full
scan of the store, paid once per forget, and every session is held against new messages
while it runs (a message saved meanwhile waits and lands afterwards).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING

from aalis_api_memory import (
    ForgetRequest,
    ForgetResult,
    Holding,
    MemoryService,
    MessagesById,
    Person,
    TextRef,
    Transfer,
    speaker,
    supports,
)

from aalis_agent._clearing import _service, memory_capability
from aalis_core import HostServices, describe, redact

if TYPE_CHECKING:
    from aalis_agent._clearing import MemoryTarget


async def forget_person(
    host: HostServices, person: Person | str, memory: MemoryTarget | None = None
) -> list[ForgetResult]:
    """Erase ``person`` from the memory store and from every plugin that joins the chain.

    ``person`` is a ``Person`` or ``"PLATFORM:USER_ID"`` (a malformed one raises
    ``ValueError`` before anything happens). Every session is held while the chain runs.
    Returns the rows: ``source="memory"`` for the store, one per plugin, and a failure row
    (``source=<plugin>``) for a middleware that raised. Emits ``memory_messages_deleted`` for
    each group session changed and ``history_changed`` for every session changed.
    """
    who = person if isinstance(person, Person) else Person.parse(person)
    handle = host.capability(memory_capability()) if memory is None else memory
    service = _service(handle)
    request = ForgetRequest(person=who)

    async def erase() -> None:
        await _erase_from_store(service, request)

    def failed(plugin: str, exc: BaseException) -> None:
        request.report(plugin, False, redact(describe(exc)))

    async with _hold_all(service):
        await host.run_middleware("memory_forget", request, erase, failed)

    for sid, messages in request.group_messages.items():
        await host.emit(
            "memory_messages_deleted",
            session_id=sid,
            timestamps=[m.timestamp for m in messages if m.timestamp is not None],
            ids=[m.id for m in messages if m.id],
        )
    for sid in request.affected_sessions:
        await host.emit("history_changed", session_id=sid)
    return request.results


def _hold_all(service: object) -> AbstractAsyncContextManager[None]:
    if supports(service, Holding):
        return service.hold(None)
    return nullcontext()


async def _erase_from_store(service: MemoryService | None, request: ForgetRequest) -> None:
    """The innermost action: the person's private sessions whole, their messages in groups."""
    if service is None:
        request.report("memory", False, "no memory backend is active; nothing was erased")
        return
    if not supports(service, Transfer, "list_sessions", "export_session"):
        request.report(
            "memory",
            False,
            "this memory backend cannot list and read every session (list_sessions, "
            "export_session), so the person's messages cannot be found",
        )
        return
    deleter = service if supports(service, MessagesById, "delete_messages_by_ids") else None
    person = request.person
    deleted = 0
    problems: list[str] = []
    for info in await service.list_sessions():
        sid = info.session_id
        try:
            records = await service.export_session(sid)
            theirs = [r.message for r in records if person.said(r.message)]
            if not theirs:
                continue
            speakers = {speaker(r.message) for r in records} - {None}
            if speakers <= {(person.platform, person.user_id)}:
                await service.clear_session(sid)
                request.private_sessions.append(sid)
                deleted += len(records)
                continue
            if deleter is None or any(not m.id for m in theirs):
                problems.append(f"{sid}: the backend cannot delete messages by id")
                continue
            count = await deleter.delete_messages_by_ids(sid, [m.id for m in theirs if m.id])
            request.group_messages[sid] = theirs
            deleted += int(count)
        except Exception as exc:
            problems.append(f"{sid}: {redact(describe(exc))}")
    counts = {
        "private_sessions": len(request.private_sessions),
        "group_sessions": len(request.group_messages),
        "messages": deleted,
    }
    private, groups = len(request.private_sessions), len(request.group_messages)
    summary = (
        f"{deleted} message{'' if deleted == 1 else 's'} erased: {private} private "
        f"session{'' if private == 1 else 's'} whole, {groups} group "
        f"session{'' if groups == 1 else 's'}"
    )
    if problems:
        shown = "; ".join(problems[:5])
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        request.report("memory", False, f"{summary}; NOT erased in {shown}{more}", counts)
    else:
        request.report("memory", True, TextRef("memory.forget.done", summary), counts)


__all__ = ["forget_person"]
