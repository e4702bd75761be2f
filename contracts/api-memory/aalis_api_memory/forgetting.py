"""Forgetting a person: ``forget_person`` and the ``memory_forget`` chain.

Modelled on clearing (``run_clear``): one request passes through an onion of middleware (one
per plugin that keeps something derived from what people said: vectors, summaries, notes,
facts), with the erasure from the memory store as the innermost action. Each participant
reports one ``ForgetResult`` row with counts, so ``aalis forget`` can show a line per layer
and exit 1 when one of them failed. What is removed, and what a model may still repeat, is
in docs/host/privacy.md.

The innermost action finds the person through the ``Transfer`` group (``list_sessions`` +
``export_session``): every session is read once, archived messages included. That is a full
scan of the store, paid once per forget, and every session is held against new messages
while it runs (a message saved meanwhile waits and lands afterwards).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING

import attrs
from aalis_schema_message import Message

from aalis_api_memory.clearing import Text, TextRef, _service, memory_capability
from aalis_api_memory.holds import Holding
from aalis_api_memory.person import Person
from aalis_api_memory.service import MemoryService, MessagesById, Transfer, supports
from aalis_api_memory.types import Delete
from aalis_api_memory.validation import check_namespace
from aalis_core.containment import describe
from aalis_core.host_services import HostServices
from aalis_core.redaction import redact

if TYPE_CHECKING:
    from aalis_api_memory.clearing import MemoryTarget

#: The key a plugin sets in a metadata entry's data to mark the entry as one person's
#: (value: ``"PLATFORM:USER_ID"``); ``forget_marked_entries`` deletes such entries.
PERSON_MARK = "person"


def speaker(message: Message) -> tuple[str, str] | None:
    """The person a *user* message carries, as ``(platform, user_id)``; None for anyone else."""
    if message.role != "user":
        return None
    metadata = message.metadata or {}
    platform, user_id = metadata.get("platform"), metadata.get("user_id")
    if isinstance(platform, str) and platform and isinstance(user_id, str) and user_id:
        return (platform, user_id)
    return None


def _counts(value: Mapping[str, int] | None) -> dict[str, int]:
    counts = dict(value or {})
    for key, count in counts.items():
        if not isinstance(key, str) or isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"counts are str -> int, got {key!r}: {count!r}")
    return counts


@attrs.frozen
class ForgetResult:
    """One layer's report: what it removed (``counts``) and whether it removed all of it."""

    source: str = attrs.field(validator=attrs.validators.instance_of(str))
    success: bool = attrs.field(validator=attrs.validators.instance_of(bool))
    message: Text = attrs.field()
    counts: dict[str, int] = attrs.field(factory=dict, converter=_counts)


@attrs.define(kw_only=True)
class ForgetRequest:
    """What every ``memory_forget`` middleware receives.

    The innermost action fills ``private_sessions`` (cleared whole: every person-carrying
    message in them was this person's) and ``group_messages`` (per group session, the
    person's messages it deleted) before the middleware's code after ``call_next`` runs.
    """

    person: Person = attrs.field(validator=attrs.validators.instance_of(Person))
    results: list[ForgetResult] = attrs.field(factory=list)
    private_sessions: list[str] = attrs.field(factory=list)
    group_messages: dict[str, list[Message]] = attrs.field(factory=dict)

    @property
    def affected_sessions(self) -> list[str]:
        return [*self.private_sessions, *self.group_messages]

    def report(
        self,
        source: str,
        success: bool,
        message: Text,
        counts: Mapping[str, int] | None = None,
    ) -> None:
        """Append a row; shorthand for ``results.append(ForgetResult(...))``."""
        self.results.append(ForgetResult(source, success, message, _counts(counts)))


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


def marked_as(data: object, person: Person) -> bool:
    """True when a metadata entry's data is marked as ``person``'s (``PERSON_MARK``)."""
    return isinstance(data, Mapping) and data.get(PERSON_MARK) == str(person)


async def forget_marked_entries(
    memory: MemoryService, namespaces: Sequence[str], person: Person
) -> int:
    """Delete the entries of ``namespaces`` marked as ``person``'s, in ONE
    ``commit_metadata``; returns how many. For plugins that keep one entry per person's
    item and mark it with ``{PERSON_MARK: "PLATFORM:USER_ID"}``."""
    if isinstance(namespaces, (str, bytes)):
        raise TypeError("namespaces must be a list of str, not a single string")
    ops: list[Delete] = []
    for namespace in [check_namespace(n) for n in namespaces]:
        for entry in await memory.list_metadata(namespace):
            if marked_as(entry.data, person):
                ops.append(Delete(namespace, entry.key))
    if ops:
        await memory.commit_metadata(ops)
    return len(ops)


__all__ = [
    "PERSON_MARK",
    "ForgetRequest",
    "ForgetResult",
    "forget_marked_entries",
    "forget_person",
    "marked_as",
    "speaker",
]
