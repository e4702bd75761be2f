"""``aalis export`` / ``aalis import`` / ``aalis migrate``: moving memory between stores.

The file format is JSON lines (docs/host/export-import.md), chosen because it streams, diffs
and greps well and every line stands alone:

- line 1, the header: ``{"format": "aalis-memory-export", "version": 1, ...}``;
- one line per message, in history order: ``{"session_id", "archived", "message"}``, where
  ``message`` is ``Message.to_json()``;
- one line per metadata entry: ``{"namespace", "key", "data"}``.

Re-running an import or a migration is always safe, because both compare what the target
already holds with what would be written, per session, before writing anything:

- the target holds the same records: the session is skipped;
- the target holds a prefix of them (an interrupted run, or an older export of a session
  that has grown since): only the missing tail is appended;
- the target holds something else: the whole command refuses, naming the sessions, and
  writes nothing; ``--replace`` clears those sessions on the target and writes them anew.

Metadata follows the same rule per key (same data: skipped, other data: refused unless
``--replace``). Both commands use the backend extensions ``list_sessions``,
``export_session``, ``import_messages`` and ``list_namespaces`` (docs/architecture.md) and
say which one is missing when a backend lacks it, instead of degrading to a partial copy.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import attrs
import click
from aalis_schema_message import CONTROL_KINDS, Message, now_ms

from aalis_api_memory.capabilities import memory
from aalis_api_memory.cli_params import SESSION
from aalis_api_memory.export_format import (
    FORMAT,
    FORMAT_VERSION,
    ExportSummary,
    TransferError,
    iter_lines,
    iter_sessions,
    reopenable,
    scan_export,
    store_order,
)
from aalis_api_memory.types import Put, SessionInfo, StoredMessage

if TYPE_CHECKING:
    from aalis_core.host import Host

#: Where ``aalis migrate --skip-oversize`` writes the messages it left out (an export file).
DEFAULT_OVERSIZE_REPORT = "aalis-migrate-oversize.jsonl"
#: Metadata ops per ``commit_metadata`` batch (one transaction each on SQLite).
METADATA_BATCH = 500

Plan = Literal["copy", "skip", "append", "replace", "conflict"]


# ------------------------------------------------------------------------------------------
# backend capabilities
# ------------------------------------------------------------------------------------------


def require(service: Any, provider: str | None, names: Sequence[str], command: str) -> None:
    """Refuse early, naming the method, when a backend lacks an optional extension."""
    missing = [name for name in names if not hasattr(service, name)]
    if missing:
        listed = ", ".join(f"{name}()" for name in missing)
        raise TransferError(
            f"memory provider {provider or '?'!r} does not implement {listed}, which "
            f"`aalis {command}` needs (optional extensions: see docs/reference/memory-contract.md)"
        )


def _call(service: Any, name: str) -> Callable[..., Awaitable[Any]]:
    method: Callable[..., Awaitable[Any]] = getattr(service, name)
    return method


def refuse_volatile(host: Host, provider: str | None, action: str) -> None:
    """Refuse to write into a provider that keeps nothing past this process.

    The copy would vanish when the command exits, while the summary line said it was
    written (docs/host/providers.md, "No silent loss of durability").
    """
    plugin = host.plugin(provider) if provider is not None else None
    if plugin is not None and getattr(plugin, "volatile", False) is True:
        raise TransferError(
            f"{provider} is volatile (it keeps nothing past this process), so whatever "
            f"`aalis {action}` wrote there would be gone when the command exits; "
            "choose a durable memory provider"
        )


def memory_holders(host: Host) -> dict[str, list[str]]:
    """Provider -> the consumers whose memory it holds (plugins, ``host`` and ``cli``).

    What ``export --all`` and ``migrate`` must cover: a consumer pinned to another store
    keeps its data there, and copying only the CLI's store would silently leave it out.
    """
    from aalis_core.cli import CLI_CONSUMER

    def durable(provider: str | None) -> bool:
        # A volatile store starts empty in every command: there is nothing in it to leave out.
        plugin = host.plugin(provider) if provider is not None else None
        return plugin is not None and getattr(plugin, "volatile", False) is not True

    holders: dict[str, list[str]] = {}
    for info in host.plugins():
        provider = info.bindings.get(memory.name)
        if provider is not None and durable(provider):
            holders.setdefault(provider, []).append(info.name)
    for consumer in ("host", CLI_CONSUMER):
        provider = host.capability(memory, consumer).provider
        if provider is not None and durable(provider):
            holders.setdefault(provider, []).append(consumer)
    return holders


def left_out(host: Host, covered: Iterable[str | None]) -> dict[str, list[str]]:
    """Providers holding some consumer's memory that are not in ``covered``."""
    skip = set(covered)
    return {p: c for p, c in memory_holders(host).items() if p not in skip}


def left_out_text(missing: dict[str, list[str]]) -> str:
    return "; ".join(
        f"{provider} (memory of {', '.join(repr(c) for c in consumers)})"
        for provider, consumers in missing.items()
    )


# ------------------------------------------------------------------------------------------
# the file format
# ------------------------------------------------------------------------------------------


def header(provider: str | None, scope: str) -> dict[str, Any]:
    """The first line of an export file."""
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": now_ms(),
        "provider": provider,
        "scope": scope,
    }


def message_line(session_id: str, record: StoredMessage) -> dict[str, Any]:
    """One message record as written to the file."""
    return {
        "session_id": session_id,
        "archived": record.archived,
        "message": record.message.to_json(),
    }


def metadata_line(namespace: str, key: str, data: dict[str, Any]) -> dict[str, Any]:
    """One metadata entry as written to the file."""
    return {"namespace": namespace, "key": key, "data": data}


def dumps(line: dict[str, Any]) -> str:
    """One JSON line (UTF-8 text, no NaN: backends refuse it anyway)."""
    return json.dumps(line, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


@attrs.define
class ExportFile:
    """A parsed, fully validated export file, held in memory (small files, tests)."""

    header: dict[str, Any]
    #: session id -> its records in file order (sessions in order of first appearance)
    sessions: dict[str, list[StoredMessage]] = attrs.field(factory=dict)
    #: (namespace, key) -> data, in file order
    metadata: dict[tuple[str, str], dict[str, Any]] = attrs.field(factory=dict)

    @property
    def message_count(self) -> int:
        return sum(len(records) for records in self.sessions.values())


def parse_export(lines: Iterable[str], source: str = "<input>") -> ExportFile:
    """Read and check a whole export into memory (``aalis import`` streams instead)."""
    parsed: ExportFile | None = None
    for number, kind, a, b in iter_lines(lines, source):
        if kind == "header":
            parsed = ExportFile(a)
        elif kind == "message":
            assert parsed is not None
            parsed.sessions.setdefault(a, []).append(b)
        else:
            assert parsed is not None
            if a in parsed.metadata:
                raise TransferError(
                    f"{source} line {number}: metadata {a[0]!r}/{a[1]!r} appears twice"
                )
            parsed.metadata[a] = b
    assert parsed is not None
    return parsed


# ------------------------------------------------------------------------------------------
# comparing what a target holds with what would be written
# ------------------------------------------------------------------------------------------


def plan_session(
    wanted: Sequence[StoredMessage], existing: Sequence[StoredMessage], replace: bool
) -> Plan:
    """What to do with one session: see the module docstring."""
    if not existing:
        return "copy"
    if len(existing) <= len(wanted) and list(existing) == list(wanted[: len(existing)]):
        return "skip" if len(existing) == len(wanted) else "append"
    return "replace" if replace else "conflict"


def _conflict_error(what: str, names: Sequence[str], target: str | None) -> TransferError:
    shown = ", ".join(repr(n) for n in names[:10])
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return TransferError(
        f"{what} {shown}{more} already hold(s) different data in {target or 'the target'!r}; "
        "nothing was written (use --replace to overwrite them there)"
    )


@attrs.define
class WriteReport:
    """What an import or a migration wrote (or found already there)."""

    sessions_written: int = 0
    sessions_skipped: int = 0
    messages_written: int = 0
    metadata_written: int = 0
    metadata_skipped: int = 0
    changed_sessions: list[str] = attrs.field(factory=list)


async def _write_session(
    target: Any,
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
    written = await _call(target, "import_messages")(session_id, records)
    report.sessions_written += 1
    report.messages_written += int(written)
    report.changed_sessions.append(session_id)
    return records


async def _plan_metadata(
    target: Any, wanted: dict[tuple[str, str], dict[str, Any]], replace: bool
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


async def _commit_puts(target: Any, puts: Sequence[Put]) -> None:
    for start in range(0, len(puts), METADATA_BATCH):
        await target.commit_metadata(puts[start : start + METADATA_BATCH])


# ------------------------------------------------------------------------------------------
# export
# ------------------------------------------------------------------------------------------


@attrs.define
class ExportReport:
    sessions: int = 0
    messages: int = 0
    metadata: int = 0
    #: ``namespace/key`` of entries that could not be read (corrupt data) and were left out
    unreadable: list[str] = attrs.field(factory=list)


async def read_metadata(
    service: Any, namespaces: Iterable[str], unreadable: list[str] | None = None
) -> dict[tuple[str, str], dict[str, Any]]:
    """Every readable metadata entry of ``namespaces``; unreadable keys go to ``unreadable``."""
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for namespace in namespaces:
        readable = await service.list_metadata(namespace)
        for entry in readable:
            entries[(namespace, entry.key)] = entry.data
        if unreadable is not None and hasattr(service, "list_metadata_keys"):
            seen = {entry.key for entry in readable}
            keys = await _call(service, "list_metadata_keys")(namespace)
            unreadable.extend(f"{namespace}/{key}" for key in keys if key not in seen)
    return entries


async def export_lines(
    service: Any, provider: str | None, session_id: str | None
) -> tuple[Iterator[str], ExportReport]:
    """Collect an export of one session (messages only) or of everything (with metadata)."""
    report = ExportReport()
    scope = "all" if session_id is None else "session"
    lines = [dumps(header(provider, scope))]
    if session_id is None:
        require(service, provider, ["list_sessions", "export_session", "list_namespaces"], "export")
        infos: list[SessionInfo] = await _call(service, "list_sessions")()
        session_ids = [info.session_id for info in infos]
    else:
        require(service, provider, ["export_session"], "export")
        session_ids = [session_id]
    for sid in session_ids:
        records: list[StoredMessage] = await _call(service, "export_session")(sid)
        if not records and session_id is not None:
            raise TransferError(
                f"session {sid!r} has no messages in {provider!r} (`aalis sessions` lists them)"
            )
        report.sessions += 1
        report.messages += len(records)
        lines.extend(dumps(message_line(sid, record)) for record in records)
    if session_id is None:
        namespaces: list[str] = await _call(service, "list_namespaces")()
        entries = await read_metadata(service, namespaces, report.unreadable)
        report.metadata = len(entries)
        lines.extend(dumps(metadata_line(ns, key, data)) for (ns, key), data in entries.items())
    return iter(lines), report


def write_atomically(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` to ``path`` through a temporary file, so a failure leaves no half file."""
    directory = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            for line in lines:
                out.write(line + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


async def export_command_impl(
    session_id: str | None, output: Path | None, from_: str | None = None
) -> ExportReport:
    from aalis_core.cli import open_host

    async with open_host() as host:
        handle = (
            host.capability(memory) if from_ is None else host.capability(memory, provider=from_)
        )
        service = handle.use  # absent: CapabilityAbsent says which provider failed and why
        if session_id is None and from_ is None:
            missing = left_out(host, [handle.provider])
            if missing:
                how = " and ".join(
                    f"`aalis export --all --from {p} -o FILE`" for p in [handle.provider, *missing]
                )
                raise TransferError(
                    f"`aalis export --all` reads {handle.provider} and would leave out "
                    f"{left_out_text(missing)}; export each store by name: {how} "
                    "(nothing was written)"
                )
        lines, report = await export_lines(service, handle.provider, session_id)
    if output is None:
        out: IO[str] = sys.stdout
        for line in lines:
            out.write(line + "\n")
        out.flush()
    else:
        write_atomically(output, lines)
    return report


# ------------------------------------------------------------------------------------------
# import
# ------------------------------------------------------------------------------------------


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
    target: Any,
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
    whose lines are not in timestamp order is still recognised on a second run. Per
    session written, ``memory_messages_saved`` is emitted with its messages.
    """
    needed = ["export_session", "import_messages"] if summary.session_counts else []
    require(target, provider, needed, "import")
    counts = summary.session_counts
    plans: dict[str, tuple[Plan, int]] = {}
    conflicts: list[str] = []
    # Only sessions the target already holds need comparing; with ``list_sessions`` the
    # others are known to be plain copies, and a fresh import skips this pass entirely.
    held: set[str] | None = None
    if hasattr(target, "list_sessions"):
        infos: list[SessionInfo] = await _call(target, "list_sessions")()
        held = {i.session_id for i in infos if i.active + i.archived > 0}
        for sid in counts:
            if sid not in held:
                plans[sid] = ("copy", 0)
    if held is None or any(sid in held for sid in counts):
        for sid, records in iter_sessions(_lines(open_stream, source), counts, source):
            if sid in plans:
                continue
            existing: list[StoredMessage] = await _call(target, "export_session")(sid)
            plan = plan_session(store_order(records), existing, replace)
            plans[sid] = (plan, len(existing))
            if plan == "conflict":
                conflicts.append(sid)
    if conflicts:
        raise _conflict_error("session(s)", conflicts, provider)
    puts, same, meta_conflicts = await _plan_metadata(target, summary.metadata, replace)
    if meta_conflicts:
        raise _conflict_error("metadata", meta_conflicts, provider)

    report = WriteReport(metadata_skipped=same)
    for sid, records in iter_sessions(_lines(open_stream, source), counts, source):
        plan, count = plans[sid]
        written = await _write_session(target, sid, store_order(records), plan, count, report)
        if host is not None and written:
            saved = conversation_messages(written)
            if saved:
                await host.emit("memory_messages_saved", session_id=sid, messages=saved)
    await _commit_puts(target, puts)
    report.metadata_written = len(puts)
    if host is not None:
        for sid in report.changed_sessions:
            await host.emit("history_changed", session_id=sid)
    return report


async def import_command_impl(path: Path, replace: bool) -> tuple[WriteReport, str | None]:
    from aalis_core.cli import open_host

    source = "<stdin>" if str(path) == "-" else str(path)
    with reopenable(path) as open_stream:
        # The whole file is checked before the host (and so any store) starts.
        summary = check_export_file(open_stream, source)
        async with open_host() as host:
            handle = host.capability(memory)
            target = handle.use  # absent: CapabilityAbsent says which provider failed and why
            refuse_volatile(host, handle.provider, "import into")
            report = await import_into(
                host, target, handle.provider, open_stream, summary, replace, source
            )
            return report, handle.provider


# ------------------------------------------------------------------------------------------
# migrate
# ------------------------------------------------------------------------------------------


@attrs.define
class MigrateReport(WriteReport):
    source: str | None = None
    target: str | None = None
    sessions: int = 0
    messages: int = 0
    archived: int = 0
    metadata: int = 0
    namespaces: int = 0
    unreadable: list[str] = attrs.field(factory=list)
    #: messages left out because the target cannot store them (``--skip-oversize``)
    oversize: list[OversizeMessage] = attrs.field(factory=list)


@attrs.frozen
class OversizeMessage:
    """A source message larger than the target stores (MongoDB: 16 MiB per document)."""

    session_id: str
    timestamp: int | None
    size: int
    record: StoredMessage

    def describe(self) -> str:
        return (
            f"session {self.session_id!r} message at timestamp {self.timestamp} ({self.size} bytes)"
        )


class SizeLimit:
    """The target's per-message size limit, when it declares one.

    A backend with a hard document limit exposes ``max_message_bytes`` and
    ``message_bytes(session_id, message)`` (memory-mongodb does); migrate checks every
    message against it before writing, instead of failing half-way through a session.
    """

    def __init__(self, target: Any) -> None:
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


ProgressFn = Callable[[int], None]


async def migrate_between(
    source: Any,
    source_name: str | None,
    target: Any,
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
    require(source, source_name, ["list_sessions", "export_session", "list_namespaces"], "migrate")
    require(
        target,
        target_name,
        ["list_sessions", "export_session", "import_messages", "clear_session"],
        "migrate",
    )
    report = MigrateReport(source=source_name, target=target_name)
    infos: list[SessionInfo] = await _call(source, "list_sessions")()
    on_target = {i.session_id: i for i in await _call(target, "list_sessions")()}

    # 0. a message the target cannot hold is named before anything is written
    size_limit = SizeLimit(target)
    if size_limit.limit is not None:
        too_big: list[OversizeMessage] = []
        for info in infos:
            _, found = size_limit.split(
                info.session_id, await _call(source, "export_session")(info.session_id)
            )
            too_big.extend(found)
        if too_big and not skip_oversize:
            shown = "; ".join(item.describe() for item in too_big[:5])
            more = f" and {len(too_big) - 5} more" if len(too_big) > 5 else ""
            raise TransferError(
                f"{_plural(len(too_big), 'message')} too large for {target_name!r} (at most "
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
        wanted, _ = size_limit.split(
            info.session_id, await _call(source, "export_session")(info.session_id)
        )
        existing = await _call(target, "export_session")(info.session_id)
        plan = plan_session(wanted, existing, replace)
        plans[info.session_id] = (plan, len(existing))
        if plan == "conflict":
            conflicts.append(info.session_id)
    if conflicts:
        raise _conflict_error("session(s)", conflicts, target_name)
    namespaces: list[str] = await _call(source, "list_namespaces")()
    entries = await read_metadata(source, namespaces, report.unreadable)
    puts, same, meta_conflicts = await _plan_metadata(target, entries, replace)
    if meta_conflicts:
        raise _conflict_error("metadata", meta_conflicts, target_name)

    # 2. copy, session by session (each import is one write on the target)
    copied: dict[str, tuple[int, int]] = {}
    report.metadata_skipped = same
    for info in infos:
        sid = info.session_id
        records, skipped = size_limit.split(sid, await _call(source, "export_session")(sid))
        report.oversize.extend(skipped)
        plan, count = plans.get(sid, ("copy", 0))
        if plan != "copy":  # re-plan on what was read now: the source may have grown
            existing = await _call(target, "export_session")(sid)
            plan, count = plan_session(records, existing, replace), len(existing)
            if plan == "conflict":
                raise _conflict_error("session(s)", [sid], target_name)
        await _write_session(target, sid, records, plan, count, report)
        archived = sum(1 for r in records if r.archived)
        copied[sid] = (len(records) - archived, archived)
        report.sessions += 1
        report.messages += len(records)
        report.archived += archived
        if progress is not None:
            progress(len(records) + len(skipped))
    await _commit_puts(target, puts)
    report.metadata_written = len(puts)
    report.metadata = len(entries)
    report.namespaces = len({ns for ns, _ in entries})

    # 3. verify: every session's counts and every metadata entry, read back from the target
    after = {i.session_id: i for i in await _call(target, "list_sessions")()}
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


async def migrate_command_impl(
    to: str,
    from_: str | None,
    replace: bool,
    show_progress: bool,
    skip_oversize: bool = False,
    oversize_report: Path | None = None,
) -> MigrateReport:
    from aalis_core.cli import open_host

    async with open_host() as host:
        source_handle = (
            host.capability(memory) if from_ is None else host.capability(memory, provider=from_)
        )
        target_handle = host.capability(memory, provider=to)
        active = ", ".join(host.providers(memory)) or "none"
        if from_ is None:
            _ = source_handle.use  # absent: CapabilityAbsent names the failed provider
        if not source_handle.present:
            raise TransferError(
                f"source memory provider {from_!r} is not active (active providers: {active})"
            )
        if not target_handle.present:
            raise TransferError(
                f"target memory provider {to!r} is not active (active providers: {active}); "
                f"configure it in [plugins.{to}]"
            )
        if source_handle.provider == target_handle.provider:
            raise TransferError(f"source and target are the same provider {to!r}")
        refuse_volatile(host, target_handle.provider, "migrate")
        if from_ is None:
            missing = left_out(host, [source_handle.provider, target_handle.provider])
            if missing:
                how = " and ".join(
                    f"`aalis migrate --from {p} --to {to}`"
                    for p in [source_handle.provider, *missing]
                )
                raise TransferError(
                    f"`aalis migrate` copies {source_handle.provider} and would leave out "
                    f"{left_out_text(missing)}; migrate each store by name: {how} "
                    "(nothing was written)"
                )
        source, target = source_handle.use, target_handle.use
        require(
            source,
            source_handle.provider,
            ["list_sessions", "export_session", "list_namespaces"],
            "migrate",
        )
        if not show_progress:
            report = await migrate_between(
                source,
                source_handle.provider,
                target,
                target_handle.provider,
                replace=replace,
                skip_oversize=skip_oversize,
            )
        else:
            infos: list[SessionInfo] = await _call(source, "list_sessions")()
            with click.progressbar(
                length=sum(i.active + i.archived for i in infos),
                label=f"Migrating {source_handle.provider} -> {target_handle.provider}",
                file=sys.stderr,
                show_pos=True,
            ) as bar:
                report = await migrate_between(
                    source,
                    source_handle.provider,
                    target,
                    target_handle.provider,
                    replace=replace,
                    progress=bar.update,
                    skip_oversize=skip_oversize,
                )
    if report.oversize:
        write_atomically(
            oversize_report or Path(DEFAULT_OVERSIZE_REPORT),
            [
                dumps(header(report.source, "oversize")),
                *(dumps(message_line(o.session_id, o.record)) for o in report.oversize),
            ],
        )
    return report


# ------------------------------------------------------------------------------------------
# the commands
# ------------------------------------------------------------------------------------------


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


@click.command("export")
@click.argument("session_id", metavar="[SESSION]", required=False, type=SESSION)
@click.option("--all", "all_", is_flag=True, help="Every session, and all metadata.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE (atomically) instead of stdout.",
)
@click.option(
    "--from",
    "from_",
    metavar="PROVIDER",
    help="Export this memory provider's data instead of the configured one.",
)
def export_command(
    session_id: str | None, all_: bool, output: Path | None, from_: str | None
) -> None:
    """Export SESSION's messages, or --all sessions and metadata, as JSON lines.

    The first line is a header with the format version; then one line per message
    {"session_id", "archived", "message"} in history order and, with --all, one line per
    metadata entry {"namespace", "key", "data"}.
    """
    from aalis_core.cli import run_async

    if (session_id is None) == (not all_):
        raise click.UsageError("give either SESSION or --all")
    report = run_async(export_command_impl(None if all_ else session_id, output, from_))
    summary = (
        f"Exported {_plural(report.messages, 'message')} of {_plural(report.sessions, 'session')}"
        + (f" and {_plural(report.metadata, 'metadata entry', 'metadata entries')}" if all_ else "")
        + (f" to {output}" if output is not None else "")
        + "."
    )
    click.echo(summary, err=True)
    if report.unreadable:
        click.echo(
            f"Skipped {len(report.unreadable)} unreadable metadata entries: "
            + ", ".join(report.unreadable[:10]),
            err=True,
        )


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path, allow_dash=True))
@click.option(
    "--replace",
    is_flag=True,
    help="Overwrite sessions and metadata keys that hold different data (default: refuse).",
)
def import_command(file: Path, replace: bool) -> None:
    """Import an export FILE (JSON lines; - reads stdin) into the configured memory.

    Safe to re-run: sessions already imported are skipped, a session holding the start of
    the file's records gets the rest appended, and anything else is refused unless
    --replace is given. The whole file is checked before anything is written.
    """
    from aalis_core.cli import run_async

    report, provider = run_async(import_command_impl(file, replace))
    click.echo(
        f"Imported {_plural(report.messages_written, 'message')} into "
        f"{_plural(report.sessions_written, 'session')} of {provider} "
        f"({report.sessions_skipped} already present); "
        f"{report.metadata_written} metadata entries written "
        f"({report.metadata_skipped} unchanged)."
    )


@click.command("migrate")
@click.option(
    "--to",
    "to",
    required=True,
    metavar="PROVIDER",
    help="The memory provider plugin to copy into (it must be active).",
)
@click.option(
    "--from",
    "from_",
    metavar="PROVIDER",
    help="Copy from this provider instead of the configured one.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Overwrite sessions and metadata keys that hold different data on the target.",
)
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Show a progress bar on stderr.",
)
@click.option(
    "--skip-oversize",
    is_flag=True,
    help="Leave out messages too large for the target (MongoDB: 16 MiB) and write them to "
    "the oversize report instead of refusing the whole migration.",
)
@click.option(
    "--oversize-report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=f"Where --skip-oversize writes the skipped messages (export format; default "
    f"./{DEFAULT_OVERSIZE_REPORT}).",
)
def migrate_command(
    to: str,
    from_: str | None,
    replace: bool,
    progress: bool,
    skip_oversize: bool,
    oversize_report: Path | None,
) -> None:
    """Copy every session and metadata namespace to another memory provider.

    Archived flags, timestamps and order are kept; counts are verified at the end. An
    interrupted migration can simply be run again: finished sessions are skipped and a
    partly copied one is completed.
    """
    from aalis_core.cli import run_async

    report = run_async(
        migrate_command_impl(to, from_, replace, progress, skip_oversize, oversize_report)
    )
    skipped = (
        f"; {_plural(len(report.oversize), 'oversize message')} skipped, written to "
        f"{oversize_report or DEFAULT_OVERSIZE_REPORT}"
        if report.oversize
        else ""
    )
    click.echo(
        f"Migrated {report.source} -> {report.target}: "
        f"{_plural(report.sessions, 'session')} ({report.messages} messages, "
        f"{report.archived} archived; {report.sessions_written} written, "
        f"{report.sessions_skipped} already there), "
        f"{report.metadata} metadata entries in {report.namespaces} namespaces "
        f"({report.metadata_written} written){skipped}; verified."
    )
    if report.unreadable:
        click.echo(
            f"Skipped {len(report.unreadable)} unreadable metadata entries: "
            + ", ".join(report.unreadable[:10]),
            err=True,
        )


def register(cli: click.Group) -> None:
    """Add ``export``, ``import`` and ``migrate`` to the ``aalis`` group."""
    cli.add_command(export_command)
    cli.add_command(import_command)
    cli.add_command(migrate_command)


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ExportFile",
    "ExportReport",
    "MigrateReport",
    "TransferError",
    "WriteReport",
    "export_command",
    "export_lines",
    "import_command",
    "import_into",
    "migrate_between",
    "migrate_command",
    "parse_export",
    "plan_session",
    "register",
]
