"""Comparing what a target holds with what would be written, then writing it.

Re-running an import or a migration is always safe, because both compare what the target
already holds with what would be written, per session, before writing anything
(``plan_session``). Records are compared by message id where both sides have one (a stored
message whose id matches *is* that message, whatever happened to it since: archived,
rewritten); a record of an older file without ids matches a stored message with the same
content and archived flag at the same position (``same_record``):

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

from aalis_api_memory import MemoryService, Put, StoredMessage, Transfer

from aalis_memory_tools._export_format import TransferError
from aalis_memory_tools._transfer.identity import named
from aalis_memory_tools._transfer.reports import WriteReport

#: Metadata ops per ``commit_metadata`` batch (one transaction each on SQLite).
METADATA_BATCH = 500

Plan = Literal["copy", "skip", "append", "replace", "conflict"]


def same_record(wanted: StoredMessage, existing: StoredMessage) -> bool:
    """Whether a stored record is the record a transfer would write at the same position.

    By id when both have one; otherwise (a file or a store from before message identity)
    by everything but the id.
    """
    if wanted.message.id is not None and existing.message.id is not None:
        return wanted.message.id == existing.message.id
    if wanted.archived != existing.archived:
        return False
    return wanted.message.with_id("x") == existing.message.with_id("x")


def plan_session(
    wanted: Sequence[StoredMessage], existing: Sequence[StoredMessage], replace: bool
) -> Plan:
    """What to do with one session: see the module docstring."""
    if not existing:
        return "copy"
    if len(existing) <= len(wanted) and all(map(same_record, wanted, existing)):
        return "skip" if len(existing) == len(wanted) else "append"
    return "replace" if replace else "conflict"


def records_to_write(
    session_id: str, wanted: Sequence[StoredMessage], plan: Plan, existing_count: int
) -> list[StoredMessage]:
    """What ``plan`` writes into the session: every record named (``transfer.identity``),
    the tail only for ``append``, nothing for ``skip``."""
    if plan in ("skip", "conflict"):
        return []
    records = named(session_id, wanted)
    return records[existing_count:] if plan == "append" else records


def conflict_error(what: str, names: Sequence[str], target: str | None) -> TransferError:
    """The refusal naming (at most ten of) the sessions or keys that hold other data."""
    shown = ", ".join(repr(n) for n in names[:10])
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return TransferError(
        f"{what} {shown}{more} already hold(s) different data in {target or 'the target'!r}; "
        "nothing was written (use --replace to overwrite them there)"
    )


def ids_error(taken: Sequence[str], target: str | None) -> TransferError:
    """The refusal naming (at most five of) the ids the target holds in other sessions."""
    shown = ", ".join(taken[:5])
    more = f" and {len(taken) - 5} more" if len(taken) > 5 else ""
    return TransferError(
        f"message id(s) {shown}{more} already stored in {target or 'the target'!r} under "
        "another session; ids are unique in a store, so nothing was written"
    )


async def write_session(
    target: Transfer,
    session_id: str,
    wanted: Sequence[StoredMessage],
    plan: Plan,
    existing_count: int,
    report: WriteReport,
) -> list[StoredMessage]:
    """Carry out ``plan`` for one session; returns the records written (none when skipped).

    Records without an id get the one derived from the file (``transfer.identity``), so
    the written records, and the event that announces them, carry the ids the store keeps.
    """
    if plan == "skip":
        report.sessions_skipped += 1
        return []
    if plan == "conflict":  # refused before anything was written; never reached
        raise TransferError(f"session {session_id!r} conflicts")
    records = records_to_write(session_id, wanted, plan, existing_count)
    if plan == "replace":
        await target.clear_session(session_id)
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
    "ids_error",
    "plan_metadata",
    "plan_session",
    "records_to_write",
    "same_record",
    "write_session",
]
