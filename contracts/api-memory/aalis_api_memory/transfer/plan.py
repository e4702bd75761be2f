"""Comparing what a target holds with what would be written, then writing it.

Re-running an import or a migration is always safe, because both compare what the target
already holds with what would be written, per session, before writing anything
(``plan_session``):

- the target holds the same records: the session is skipped;
- the target holds a prefix of them (an interrupted run, or an older export of a session
  that has grown since): only the missing tail is appended;
- the target holds something else: the whole transfer refuses, naming the sessions, and
  writes nothing (``conflict_error``); with ``replace`` those sessions are cleared on the
  target and written anew.

Metadata follows the same rule per key (``plan_metadata``: same data skipped, other data
refused unless ``replace``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from aalis_api_memory.export_format import TransferError
from aalis_api_memory.service import MemoryService, Transfer
from aalis_api_memory.transfer.reports import WriteReport
from aalis_api_memory.types import Put, StoredMessage

#: Metadata ops per ``commit_metadata`` batch (one transaction each on SQLite).
METADATA_BATCH = 500

Plan = Literal["copy", "skip", "append", "replace", "conflict"]


def plan_session(
    wanted: Sequence[StoredMessage], existing: Sequence[StoredMessage], replace: bool
) -> Plan:
    """What to do with one session: see the module docstring."""
    if not existing:
        return "copy"
    if len(existing) <= len(wanted) and list(existing) == list(wanted[: len(existing)]):
        return "skip" if len(existing) == len(wanted) else "append"
    return "replace" if replace else "conflict"


def conflict_error(what: str, names: Sequence[str], target: str | None) -> TransferError:
    """The refusal naming (at most ten of) the sessions or keys that hold other data."""
    shown = ", ".join(repr(n) for n in names[:10])
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return TransferError(
        f"{what} {shown}{more} already hold(s) different data in {target or 'the target'!r}; "
        "nothing was written (use --replace to overwrite them there)"
    )


async def write_session(
    target: Transfer,
    session_id: str,
    wanted: Sequence[StoredMessage],
    plan: Plan,
    existing_count: int,
    report: WriteReport,
) -> list[StoredMessage]:
    """Carry out ``plan`` for one session; returns the records written (none when skipped)."""
    if plan == "skip":
        report.sessions_skipped += 1
        return []
    if plan == "conflict":  # refused before anything was written; never reached
        raise TransferError(f"session {session_id!r} conflicts")
    records = list(wanted)
    if plan == "replace":
        await target.clear_session(session_id)
    elif plan == "append":
        records = records[existing_count:]
    written = await target.import_messages(session_id, records)
    report.sessions_written += 1
    report.messages_written += int(written)
    report.changed_sessions.append(session_id)
    return records


async def plan_metadata(
    target: MemoryService, wanted: dict[tuple[str, str], dict[str, Any]], replace: bool
) -> tuple[list[Put], int, list[str]]:
    """Puts to write, entries already equal, conflicting ``namespace/key`` names."""
    puts: list[Put] = []
    same = 0
    conflicts: list[str] = []
    by_namespace: dict[str, dict[str, dict[str, Any]]] = {}
    for (namespace, key), data in wanted.items():
        by_namespace.setdefault(namespace, {})[key] = data
    for namespace, entries in by_namespace.items():
        current = {e.key: e.data for e in await target.list_metadata(namespace)}
        for key, data in entries.items():
            if key not in current:
                puts.append(Put(namespace, key, data))
            elif current[key] == data:
                same += 1
            elif replace:
                puts.append(Put(namespace, key, data))
            else:
                conflicts.append(f"{namespace}/{key}")
    return puts, same, conflicts


async def commit_puts(target: MemoryService, puts: Sequence[Put]) -> None:
    """Write ``puts`` in batches of ``METADATA_BATCH`` (one transaction each on SQLite)."""
    for start in range(0, len(puts), METADATA_BATCH):
        await target.commit_metadata(puts[start : start + METADATA_BATCH])


__all__ = [
    "METADATA_BATCH",
    "Plan",
    "commit_puts",
    "conflict_error",
    "plan_metadata",
    "plan_session",
    "write_session",
]
