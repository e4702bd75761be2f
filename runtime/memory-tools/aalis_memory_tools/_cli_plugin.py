"""The ``memory-cli`` plugin: the memory commands of the ``aalis`` CLI.

``history``, ``sessions``, ``clear`` and ``metadata`` live here; ``export``, ``import`` and
``migrate`` live in ``aalis_memory_tools._cli_transfer`` and join through the same hook. Every
command opens the CLI's host (consumer ``cli``, so ``[consumers.cli]`` pins apply) and talks
to memory through its handle, exactly as a plugin would: the commands are a client of the
contract, not a side door into one backend.

Output is for people by default and JSON with ``--json`` where a script would want it.
Errors are one line on stderr and exit code 1 (``run_async``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click
from aalis_agent import UndoError, UndoOutcome, clear_types, run_clear, undo_last_turn
from aalis_api_memory import (
    CONTEXT,
    AalisMemoryError,
    ClearResult,
    ClearType,
    FullHistory,
    MemoryService,
    MetadataKeys,
    SummaryRecord,
    Transfer,
    compression,
    history_cleared,
    memory,
    resolve_types,
    supports,
)
from aalis_schema_message import Message

from aalis_core import Plugin, hookimpl
from aalis_memory_tools._cli_params import SESSION

if TYPE_CHECKING:
    from aalis_core import Host


class CommandError(AalisMemoryError, click.ClickException):
    """A user-facing failure: one line on stderr, exit code 1."""


G = TypeVar("G")


def _service(host: Host) -> MemoryService:
    return host.capability(memory).use


def _require(service: MemoryService, group: Callable[..., G], method: str, command: str) -> G:
    """``service`` as ``group`` (the command calls only ``method`` of it), or a
    ``CommandError`` naming what the backend lacks."""
    if supports(service, group, method):
        return service
    needed = f"{method}()"
    raise CommandError(
        f"`aalis {command}` needs {needed}, which the active memory backend does not offer"
    )


def _when(timestamp: int | None) -> str:
    if timestamp is None:
        return "-"
    try:
        moment = datetime.fromtimestamp(timestamp / 1000).astimezone()
    except (OverflowError, OSError, ValueError):
        return str(timestamp)  # outside what the platform's clock can show
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _message_line(message: Message) -> str:
    """One message as a readable block: time, role (and kind), then the text, indented."""
    label = message.role if message.kind is None else f"{message.role}/{message.kind}"
    if message.name:
        label += f" ({message.name})"
    parts: list[str] = []
    if message.content:
        parts.append(message.content)
    for call in message.tool_calls or ():
        parts.append(f"-> {call.name}({call.arguments})")
    if message.tool_call_id and not message.tool_calls:
        label += f" [{message.tool_call_id}]"
    text = "\n".join(parts) if parts else "(no content)"
    lines = text.splitlines() or [""]
    head = f"{_when(message.timestamp)}  {label}: {lines[0]}"
    return "\n".join([head, *(f"    {line}" for line in lines[1:])])


class _Limit(click.ParamType):  # type: ignore[type-arg]
    """A non-negative int, or ``all`` for everything."""

    name = "N|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int) or value is None:
            return value
        text = str(value).strip().lower()
        if text in ("all", "inf"):
            return math.inf
        try:
            number = int(text)
        except ValueError:
            self.fail(f"{value!r} is not a non-negative integer or 'all'", param, ctx)
        if number < 0:
            self.fail(f"{value!r} is negative", param, ctx)
        return number


# -- history ------------------------------------------------------------------------------


async def _history(
    session_id: str, full: bool, limit: float | None
) -> tuple[list[Message], SummaryRecord | None]:
    from aalis_core import open_host

    async with open_host() as host:
        service = _service(host)
        if full:
            full_history = _require(service, FullHistory, "get_full_history", "history --full")
            messages: list[Message] = await full_history.get_full_history(session_id, limit)
        else:
            messages = await service.get_history(session_id, limit)
        return messages, await _summary(host, session_id)


async def _summary(host: Host, session_id: str) -> SummaryRecord | None:
    """The summary a prompt builder sends before the history, through ``compression``.

    Read through the capability (this contract cannot import the plugin that writes it), so
    it is whatever the active compression provider calls the session's summary.
    """
    handle = host.capability(compression)
    if not handle.present:
        return None
    try:
        record = await handle.use.summary(session_id)
    except Exception as exc:  # a broken provider must not hide the history itself
        click.echo(f"warning: the summary could not be read: {exc}", err=True)
        return None
    return record if isinstance(record, SummaryRecord) else None


def _summary_lines(record: SummaryRecord) -> list[str]:
    span = f"{_when(record.covered_from)} .. {_when(record.covered_to)}"
    lines = record.text.splitlines() or [""]
    return [f"summary (by {record.model}, covers {span}):", *(f"    {line}" for line in lines)]


@click.command("history")
@click.argument("session_id", metavar="SESSION", type=SESSION)
@click.option("--full", is_flag=True, help="Include archived (compressed) messages.")
@click.option(
    "--limit",
    "-n",
    type=_Limit(),
    default=None,
    help="How many: conversation messages (markers in between shown), or with --full every "
    "message counts. 'all' for everything. Default 50, or 200 with --full.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of messages.")
def history_command(session_id: str, full: bool, limit: float | None, as_json: bool) -> None:
    """Show the history of SESSION, oldest first, after the summary the model sees."""
    from aalis_core import run_async

    messages, summary = run_async(_history(session_id, full, limit))
    if as_json:
        click.echo(json.dumps([m.to_json() for m in messages], ensure_ascii=False, indent=2))
        return
    if summary is not None:
        for line in _summary_lines(summary):
            click.echo(line)
    if not messages:
        click.echo(f"no messages in session {session_id!r}", err=True)
        return
    for message in messages:
        click.echo(_message_line(message))


# -- sessions -----------------------------------------------------------------------------


async def _sessions() -> list[Any]:
    from aalis_core import open_host

    async with open_host() as host:
        service = _service(host)
        return list(await _require(service, Transfer, "list_sessions", "sessions").list_sessions())


@click.command("sessions")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def sessions_command(as_json: bool) -> None:
    """List every session, the most recently active first."""
    from aalis_core import run_async

    infos = run_async(_sessions())
    if as_json:
        rows = [
            {
                "session_id": info.session_id,
                "active": info.active,
                "archived": info.archived,
                "last_timestamp": info.last_timestamp,
            }
            for info in infos
        ]
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not infos:
        click.echo("no sessions", err=True)
        return
    width = max(len("SESSION"), *(len(info.session_id) for info in infos))
    click.echo(f"{'SESSION':<{width}}  {'ACTIVE':>6}  {'ARCHIVED':>8}  LAST MESSAGE")
    for info in infos:
        click.echo(
            f"{info.session_id:<{width}}  {info.active:>6}  {info.archived:>8}  "
            f"{_when(info.last_timestamp)}"
        )


# -- clear --------------------------------------------------------------------------------


async def _registered_types() -> list[ClearType]:
    from aalis_core import open_host

    async with open_host() as host:
        return clear_types(host)


class _ClearCommand(click.Command):
    """``aalis clear``: its help lists the clear types the active plugins register.

    Those depend on which plugins start with the current configuration, so the list is
    made when help is shown (starting the host), never when the CLI merely loads.
    """

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        import asyncio

        try:
            types = asyncio.run(_registered_types())
        except Exception as exc:
            from aalis_core import format_error

            lines = [("", f"(could not list them: {format_error(exc)})")]
        else:
            lines = [(item.id, str(item.label)) for item in types] or [("", "(none registered)")]
        lines.append(("history, messages", "aliases of context"))
        lines.append(("all", "every type (the default)"))
        with formatter.section("Clear types"):
            formatter.write_dl(lines)
        super().format_epilog(ctx, formatter)


async def _clear(session_id: str | None, types: Sequence[str] | None) -> list[ClearResult]:
    from aalis_core import open_host

    async with open_host() as host:
        # A clear without the store would report "cleared" for the other types while the
        # history stays on disk: refuse with the reason the store is absent instead.
        _service(host)
        if session_id is None:
            return await run_clear(host, "all", None, types)
        return await run_clear(host, "session", session_id, types)


def _result_line(row: ClearResult) -> str:
    status = "ok" if row.success else "FAILED"
    return f"{status:<6} {row.type or '-'}: {row.message} [{row.source}]"


@click.command("clear", cls=_ClearCommand)
@click.option(
    "--session", "-s", "session_id", metavar="SESSION", type=SESSION, help="Clear this session."
)
@click.option("--all", "all_", is_flag=True, help="Clear every session.")
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Do not ask before clearing every session (needed with --all when not on a terminal).",
)
@click.option(
    "--type",
    "-t",
    "types",
    multiple=True,
    metavar="TYPE",
    help="Clear only this type (repeatable); every type when omitted.",
)
def clear_command(session_id: str | None, all_: bool, yes: bool, types: tuple[str, ...]) -> None:
    """Clear one session (--session) or everything (--all) through every plugin.

    Prints one line per result; exits with status 1 if any of them failed, or if the
    history was asked for and is not cleared. --all asks first on a terminal; scripts pass
    --yes (without a terminal and without --yes it refuses).
    """
    from aalis_core import run_async

    if (session_id is None) == (not all_):
        raise click.UsageError("give exactly one of --session SESSION or --all")
    if all_ and not yes:
        _confirm_clear_all()
    wanted = list(types) if types else None
    results = run_async(_clear(session_id, wanted))
    for row in results:
        click.echo(_result_line(row))
    if not results:
        click.echo("nothing was cleared: no plugin answered", err=True)
    failed = any(not row.success for row in results) or not results
    resolved = resolve_types(wanted)
    if (resolved is None or CONTEXT in resolved) and not history_cleared(results):
        click.echo("the conversation history was NOT cleared (no successful context row)", err=True)
        failed = True
    if failed:
        click.get_current_context().exit(1)


def _interactive() -> bool:
    """True when a person can answer a question (stdin is a terminal)."""
    import sys

    return sys.stdin.isatty()


def _confirm_clear_all() -> None:
    """Ask before clearing every session; without a terminal, refuse (scripts say --yes)."""
    if not _interactive():
        raise click.UsageError(
            "clear --all removes every session; not on a terminal, so pass --yes to confirm"
        )
    if not click.confirm("Clear every session (and every type)?", default=False):
        click.echo("Nothing cleared.", err=True)
        click.get_current_context().exit(1)


# -- metadata -----------------------------------------------------------------------------


@click.group("metadata")
def metadata_group() -> None:
    """Read and delete entries of the metadata store."""


async def _metadata_list(namespace: str | None) -> tuple[list[str], list[Any], list[str]]:
    from aalis_core import open_host

    async with open_host() as host:
        service = _service(host)
        if namespace is None:
            listing = _require(service, MetadataKeys, "list_namespaces", "metadata list")
            return list(await listing.list_namespaces()), [], []
        entries = list(await service.list_metadata(namespace))
        unreadable: list[str] = []
        if supports(service, MetadataKeys, "list_metadata_keys"):
            readable = {entry.key for entry in entries}
            keys = await service.list_metadata_keys(namespace)
            unreadable = [key for key in keys if key not in readable]
        return [], entries, unreadable


@metadata_group.command("list")
@click.argument("namespace", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def metadata_list_command(namespace: str | None, as_json: bool) -> None:
    """List the entries of NAMESPACE, or the namespaces when none is given."""
    from aalis_core import run_async

    namespaces, entries, unreadable = run_async(_metadata_list(namespace))
    if namespace is None:
        if as_json:
            click.echo(json.dumps(namespaces, ensure_ascii=False))
        elif not namespaces:
            click.echo("no metadata", err=True)
        for name in [] if as_json else namespaces:
            click.echo(name)
        return
    if as_json:
        rows = [{"key": e.key, "data": e.data, "updated_at": e.updated_at} for e in entries]
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        if not entries and not unreadable:
            click.echo(f"no entries in namespace {namespace!r}", err=True)
        for entry in entries:
            data = json.dumps(entry.data, ensure_ascii=False, separators=(",", ":"))
            click.echo(f"{entry.key}\t{_when(entry.updated_at)}\t{data}")
    for key in unreadable:
        click.echo(f"warning: entry {namespace}/{key} is unreadable", err=True)


async def _metadata_get(namespace: str, key: str) -> dict[str, Any] | None:
    from aalis_core import open_host

    async with open_host() as host:
        data: dict[str, Any] | None = await _service(host).get_metadata(namespace, key)
        return data


@metadata_group.command("get")
@click.argument("namespace")
@click.argument("key")
def metadata_get_command(namespace: str, key: str) -> None:
    """Print the data of NAMESPACE/KEY as JSON."""
    from aalis_core import run_async

    data = run_async(_metadata_get(namespace, key))
    if data is None:
        raise CommandError(f"no readable metadata entry {namespace}/{key}")
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


async def _metadata_delete(namespace: str, key: str) -> bool | None:
    """Delete; True if it existed, False if not, None when the backend cannot tell."""
    from aalis_core import open_host

    async with open_host() as host:
        service = _service(host)
        existed: bool | None = None
        if supports(service, MetadataKeys, "list_metadata_keys"):
            existed = key in await service.list_metadata_keys(namespace)
        await service.delete_metadata(namespace, key)
        return existed


@metadata_group.command("delete")
@click.argument("namespace")
@click.argument("key")
def metadata_delete_command(namespace: str, key: str) -> None:
    """Delete NAMESPACE/KEY (unreadable entries too); a missing key is not an error."""
    from aalis_core import run_async

    existed = run_async(_metadata_delete(namespace, key))
    if existed is False:
        click.echo(f"no entry {namespace}/{key}; nothing deleted")
    else:
        click.echo(f"deleted {namespace}/{key}")


# -- undo ---------------------------------------------------------------------------------


async def _undo(session_id: str) -> UndoOutcome:
    from aalis_core import open_host

    async with open_host() as host:
        try:
            return await undo_last_turn(_service(host), session_id, host.emit)
        except UndoError as exc:
            raise CommandError(str(exc)) from None


@click.command("undo")
@click.argument("session_id", metavar="SESSION")
def undo_command(session_id: str) -> None:
    """Delete the last turn of SESSION (its newest user message and what followed).

    Archived copies go too, and every plugin that derives data from the history (semantic
    recall, summaries) is told through the change events.
    """
    from aalis_core import run_async

    outcome = run_async(_undo(session_id))
    click.echo(f"undone: {len(outcome.messages)} messages deleted from session {session_id!r}")
    for message in outcome.messages:
        click.echo(f"  {_message_line(message)}")


# -- the plugin ---------------------------------------------------------------------------

COMMANDS: tuple[click.Command, ...] = (
    history_command,
    sessions_command,
    clear_command,
    metadata_group,
    undo_command,
)


def register(cli: click.Group) -> None:
    """Add the memory commands (and export/import/migrate) to the ``aalis`` group."""
    from aalis_memory_tools._cli_backup import backup_command
    from aalis_memory_tools._cli_forget import forget_command
    from aalis_memory_tools._cli_transfer import register as register_transfer

    for command in COMMANDS:
        cli.add_command(command)
    register_transfer(cli)
    cli.add_command(backup_command)
    cli.add_command(forget_command)


class MemoryCli(Plugin):
    """Adds the memory commands to ``aalis``; it provides and uses nothing at run time."""

    name = "memory-cli"

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        register(cli)


__all__ = ["CommandError", "MemoryCli"]
