"""Import: writing a checked export file into a store, after comparing every session first.

The file is never held in memory (``aalis_memory_tools._export_format``): it is checked whole
first (``check_export_file``), then read again once per pass, one session at a time: once to
plan every session against what the target holds (``transfer.plan``), once to write.
``import_file`` does all of it for a path; ``aalis import`` calls the two steps itself, so
the file is checked before the host (and so any store) starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from aalis_api_memory import MemoryService, MessagesById, StoredMessage, Transfer, supports
from aalis_schema_message import CONTROL_KINDS, Message

from aalis_memory_tools._export_format import (
    ExportSummary,
    TransferError,
    iter_sessions,
    reopenable,
    scan_export,
    store_order,
)
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
from aalis_memory_tools._transfer.reports import WriteReport
from aalis_memory_tools._transfer.stores import require

if TYPE_CHECKING:
    from aalis_core import Host


def _lines(open_stream: Callable[[], IO[str]], source: str) -> Iterator[str]:
    """The lines of a fresh stream, with a decoding error turned into one clear line."""
    with open_stream() as stream:
        try:
            yield from stream
        except UnicodeDecodeError as exc:
            raise TransferError(f"{source}: not UTF-8 text ({exc.reason})") from None


def check_export_file(open_stream: Callable[[], IO[str]], source: str) -> ExportSummary:
    """Check a whole export file (streamed) before anything is written."""
    return scan_export(_lines(open_stream, source), source)


def conversation_messages(records: Sequence[StoredMessage]) -> list[Message]:
    """What ``memory_messages_saved`` carries: the saved messages, event markers left out."""
    return [r.message for r in records if r.message.kind not in CONTROL_KINDS]


async def import_into(
    host: Host | None,
    target: MemoryService,
    provider: str | None,
    open_stream: Callable[[], IO[str]],
    summary: ExportSummary,
    replace: bool,
    source: str = "<input>",
) -> WriteReport:
    """Write a checked export file into ``target``, after comparing every session first.

    The file is read again per pass (``iter_sessions``): once to plan every session
    against what the target holds, once to write. Records are compared in the store's
    order (timestamp, then file order), which is how the target returns them, so a file
    whose lines are not in timestamp order is still recognised on a second run. Records
    are matched by id, and an id the target holds in another session refuses the import
    before anything is written (``transfer.identity``). Per session written,
    ``memory_messages_saved`` is emitted with its messages (ids included).
    """
    needed = ["export_session", "import_messages"] if summary.session_counts else []
    store = require(target, provider, needed, "import")
    counts = summary.session_counts
    plans: dict[str, tuple[Plan, int]] = {}
    conflicts: list[str] = []
    # Only sessions the target already holds need comparing; with ``list_sessions`` the
    # others are known to be plain copies, and a fresh import skips this pass entirely.
    held: set[str] | None = None
    if supports(target, Transfer, "list_sessions"):
        infos = await target.list_sessions()
        held = {i.session_id for i in infos if i.active + i.archived > 0}
        for sid in counts:
            if sid not in held:
                plans[sid] = ("copy", 0)
    # An empty target holds no id; any other is asked about the ids to be written.
    check_ids = held is None or bool(held)
    check_ids = check_ids and supports(target, MessagesById, "get_messages_by_ids")
    taken: list[str] = []
    if held is None or check_ids or any(sid in held for sid in counts):
        for sid, records in iter_sessions(_lines(open_stream, source), counts, source):
            ordered = store_order(records)
            if sid not in plans:
                existing = await store.export_session(sid)
                plan = plan_session(ordered, existing, replace)
                plans[sid] = (plan, len(existing))
                if plan == "conflict":
                    conflicts.append(sid)
            if check_ids:
                plan, count = plans[sid]
                to_write = records_to_write(sid, ordered, plan, count)
                taken.extend(await ids_taken(target, [(sid, to_write)]))
    if conflicts:
        raise conflict_error("session(s)", conflicts, provider)
    if taken:
        raise ids_error(taken, provider)
    puts, same, meta_conflicts = await plan_metadata(target, summary.metadata, replace)
    if meta_conflicts:
        raise conflict_error("metadata", meta_conflicts, provider)

    report = WriteReport(metadata_skipped=same)
    for sid, records in iter_sessions(_lines(open_stream, source), counts, source):
        plan, count = plans[sid]
        written = await write_session(store, sid, store_order(records), plan, count, report)
        if host is not None and written:
            saved = conversation_messages(written)
            if saved:
                await host.emit("memory_messages_saved", session_id=sid, messages=saved)
    await commit_puts(target, puts)
    report.metadata_written = len(puts)
    if host is not None:
        for sid in report.changed_sessions:
            await host.emit("history_changed", session_id=sid)
    return report


async def import_file(
    memory: MemoryService,
    path: Path | str,
    *,
    provider: str | None = None,
    replace: bool = False,
    host: Host | None = None,
) -> WriteReport:
    """Check the export file at ``path`` (``-``: standard input), then import it into ``memory``.

    The whole file is checked before anything is written; the rules for sessions and keys
    the store already holds are those of ``transfer.plan`` (``replace`` overwrites what
    differs instead of refusing). With ``host``, the events an import sends
    (``memory_messages_saved``, ``history_changed``) are emitted on it.
    """
    path = Path(path)
    source = "<stdin>" if str(path) == "-" else str(path)
    with reopenable(path) as open_stream:
        summary = check_export_file(open_stream, source)
        return await import_into(host, memory, provider, open_stream, summary, replace, source)


__all__ = ["check_export_file", "conversation_messages", "import_file", "import_into"]
