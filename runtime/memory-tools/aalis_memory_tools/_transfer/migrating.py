"""Migrate: copying every session and metadata entry from one store to another, then verifying.

``migrate_between`` reads both stores through the contract (the optional extensions
``list_sessions``, ``export_session``, ``import_messages``, ``list_namespaces``), applies
the re-run rule of ``transfer.plan`` per session, and reads the target back at the end to
verify every session's counts and every metadata entry. A target with a per-message size
limit (``SizeLimit``) is checked against every message before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aalis_api_memory import MemoryService, MessagesById, SessionInfo, StoredMessage, supports
from aalis_schema_message import Message

from aalis_memory_tools._export_format import TransferError
from aalis_memory_tools._transfer.exporting import read_metadata
from aalis_memory_tools._transfer.identity import ids_taken
from aalis_memory_tools._transfer.plan import (
    Plan,
    commit_puts,
    conflict_error,
    ids_error,
    plan_metadata,
    plan_session,
    records_to_write,
    write_session,
)
from aalis_memory_tools._transfer.reports import MigrateReport, OversizeMessage, plural
from aalis_memory_tools._transfer.stores import require


class SizeLimit:
    """The target's per-message size limit, when it declares one.

    A backend with a hard document limit exposes ``max_message_bytes`` and
    ``message_bytes(session_id, message)`` (memory-mongodb does); migrate checks every
    message against it before writing, instead of failing half-way through a session.
    """

    def __init__(self, target: object) -> None:
        limit = getattr(target, "max_message_bytes", None)
        measure = getattr(target, "message_bytes", None)
        usable = isinstance(limit, int) and callable(measure)
        self.limit: int | None = limit if usable else None
        self._measure: Callable[[str, Message], int] | None = measure if usable else None

    def split(
        self, session_id: str, records: Sequence[StoredMessage]
    ) -> tuple[list[StoredMessage], list[OversizeMessage]]:
        """The records that fit, and those that do not."""
        if self._measure is None or self.limit is None:
            return list(records), []
        fitting: list[StoredMessage] = []
        oversize: list[OversizeMessage] = []
        for record in records:
            size = self._measure(session_id, record.message)
            if size > self.limit:
                oversize.append(OversizeMessage(session_id, record.message.timestamp, size, record))
            else:
                fitting.append(record)
        return fitting, oversize


#: ``progress(n)``: called with the number of source messages handled after each session.
ProgressFn = Callable[[int], None]


async def migrate_between(
    source: MemoryService,
    source_name: str | None,
    target: MemoryService,
    target_name: str | None,
    *,
    replace: bool = False,
    progress: ProgressFn | None = None,
    skip_oversize: bool = False,
) -> MigrateReport:
    """Copy every session (archived flags, order) and every metadata namespace, then verify.

    A message the target cannot store (``SizeLimit``) stops the migration before anything
    is written, naming it; with ``skip_oversize`` such messages are left out and listed in
    ``report.oversize`` (the command writes them to a file).

    Sessions the target already holds are compared first (``plan_session``); a conflict
    stops the migration before anything is written. ``progress(n)`` is called with the
    number of source messages handled after each session. No ``history_changed`` is
    emitted: events name no provider, and the sessions consumers are bound to (the
    source's) did not change.
    """
    reader = require(
        source, source_name, ["list_sessions", "export_session", "list_namespaces"], "migrate"
    )
    writer = require(
        target,
        target_name,
        ["list_sessions", "export_session", "import_messages", "clear_session"],
        "migrate",
    )
    report = MigrateReport(source=source_name, target=target_name)
    infos: list[SessionInfo] = await reader.list_sessions()
    on_target = {i.session_id: i for i in await writer.list_sessions()}

    # 0. a message the target cannot hold is named before anything is written
    size_limit = SizeLimit(target)
    if size_limit.limit is not None:
        too_big: list[OversizeMessage] = []
        for info in infos:
            _, found = size_limit.split(
                info.session_id, await reader.export_session(info.session_id)
            )
            too_big.extend(found)
        if too_big and not skip_oversize:
            shown = "; ".join(item.describe() for item in too_big[:5])
            more = f" and {len(too_big) - 5} more" if len(too_big) > 5 else ""
            raise TransferError(
                f"{plural(len(too_big), 'message')} too large for {target_name!r} (at most "
                f"{size_limit.limit} bytes each): {shown}{more}; nothing was written. Re-run "
                "with --skip-oversize to copy everything else and write the skipped messages "
                "to a report file (--oversize-report FILE)"
            )

    # 1. look before writing: only sessions the target already has need a comparison
    plans: dict[str, tuple[Plan, int]] = {}
    conflicts: list[str] = []
    for info in infos:
        there = on_target.get(info.session_id)
        if there is None or there.active + there.archived == 0:
            continue
        wanted, _ = size_limit.split(info.session_id, await reader.export_session(info.session_id))
        existing = await writer.export_session(info.session_id)
        plan = plan_session(wanted, existing, replace)
        plans[info.session_id] = (plan, len(existing))
        if plan == "conflict":
            conflicts.append(info.session_id)
    if conflicts:
        raise conflict_error("session(s)", conflicts, target_name)
    # Ids are kept: one the target holds in another session would stop the copy half-way.
    if any(i.active + i.archived for i in on_target.values()) and supports(
        target, MessagesById, "get_messages_by_ids"
    ):
        taken: list[str] = []
        for info in infos:
            sid = info.session_id
            wanted, _ = size_limit.split(sid, await reader.export_session(sid))
            plan, count = plans.get(sid, ("copy", 0))
            taken.extend(
                await ids_taken(target, [(sid, records_to_write(sid, wanted, plan, count))])
            )
        if taken:
            raise ids_error(taken, target_name)
    namespaces: list[str] = await reader.list_namespaces()
    entries = await read_metadata(source, namespaces, report.unreadable)
    puts, same, meta_conflicts = await plan_metadata(target, entries, replace)
    if meta_conflicts:
        raise conflict_error("metadata", meta_conflicts, target_name)

    # 2. copy, session by session (each import is one write on the target)
    copied: dict[str, tuple[int, int]] = {}
    report.metadata_skipped = same
    for info in infos:
        sid = info.session_id
        records, skipped = size_limit.split(sid, await reader.export_session(sid))
        report.oversize.extend(skipped)
        plan, count = plans.get(sid, ("copy", 0))
        if plan != "copy":  # re-plan on what was read now: the source may have grown
            existing = await writer.export_session(sid)
            plan, count = plan_session(records, existing, replace), len(existing)
            if plan == "conflict":
                raise conflict_error("session(s)", [sid], target_name)
        await write_session(writer, sid, records, plan, count, report)
        archived = sum(1 for r in records if r.archived)
        copied[sid] = (len(records) - archived, archived)
        report.sessions += 1
        report.messages += len(records)
        report.archived += archived
        if progress is not None:
            progress(len(records) + len(skipped))
    await commit_puts(target, puts)
    report.metadata_written = len(puts)
    report.metadata = len(entries)
    report.namespaces = len({ns for ns, _ in entries})

    # 3. verify: every session's counts and every metadata entry, read back from the target
    after = {i.session_id: i for i in await writer.list_sessions()}
    wrong: list[str] = []
    for sid, (active, archived) in copied.items():
        landed_info = after.get(sid)
        got = (landed_info.active, landed_info.archived) if landed_info else (0, 0)
        if got != (active, archived):
            wrong.append(
                f"session {sid!r}: {got[0]} active/{got[1]} archived, expected {active}/{archived}"
            )
    landed = await read_metadata(target, sorted({ns for ns, _ in entries}))
    wrong.extend(
        f"metadata {ns}/{key}"
        for (ns, key), data in entries.items()
        if landed.get((ns, key)) != data
    )
    if wrong:
        shown = "; ".join(wrong[:5]) + (f" and {len(wrong) - 5} more" if len(wrong) > 5 else "")
        raise TransferError(f"verification failed on {target_name!r}: {shown}")
    return report


__all__ = ["ProgressFn", "SizeLimit", "migrate_between"]
