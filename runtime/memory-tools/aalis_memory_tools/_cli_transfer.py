"""``aalis export`` / ``aalis import`` / ``aalis migrate``: the commands, thin.

Each command parses its options, opens the host from the CLI's configuration, asks the
engine (``_transfer``, docs/reference/transfer.md) for the stores and the transfer, and
prints the one-line summary; errors are ``TransferError`` lines. The file format is
``_export_format``; what the commands do and print is docs/host/export-import.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from aalis_memory_tools._cli_params import SESSION
from aalis_memory_tools._export_format import (
    dumps,
    header,
    message_line,
    reopenable,
)
from aalis_memory_tools._transfer import (
    ExportReport,
    MigrateReport,
    WriteReport,
    atomic_output,
    check_export_file,
    export_sessions,
    export_source,
    import_into,
    import_target,
    migrate_between,
    migration_stores,
    require,
    write_atomically,
)
from aalis_memory_tools._transfer.reports import plural as _plural

#: Where ``aalis migrate --skip-oversize`` writes the messages it left out (an export file).
DEFAULT_OVERSIZE_REPORT = "aalis-migrate-oversize.jsonl"


# ------------------------------------------------------------------------------------------
# what the commands run: open the host, pick the stores, call the engine
# ------------------------------------------------------------------------------------------


async def export_command_impl(
    session_id: str | None, output: Path | None, from_: str | None = None
) -> ExportReport:
    from aalis_core import open_host

    async with open_host() as host:
        service, provider = export_source(host, session_id, from_)
        if output is None:
            report = await export_sessions(
                service, sys.stdout, provider=provider, session_id=session_id
            )
            sys.stdout.flush()
        else:
            with atomic_output(output) as out:
                report = await export_sessions(
                    service, out, provider=provider, session_id=session_id
                )
    return report


async def import_command_impl(path: Path, replace: bool) -> tuple[WriteReport, str | None]:
    from aalis_core import open_host

    source = "<stdin>" if str(path) == "-" else str(path)
    with reopenable(path) as open_stream:
        # The whole file is checked before the host (and so any store) starts.
        summary = check_export_file(open_stream, source)
        async with open_host() as host:
            target, provider = import_target(host)
            report = await import_into(
                host, target, provider, open_stream, summary, replace, source
            )
            return report, provider


async def migrate_command_impl(
    to: str,
    from_: str | None,
    replace: bool,
    show_progress: bool,
    skip_oversize: bool = False,
    oversize_report: Path | None = None,
) -> MigrateReport:
    from aalis_core import open_host

    async with open_host() as host:
        source, source_name, target, target_name = migration_stores(host, to, from_)
        if not show_progress:
            report = await migrate_between(
                source,
                source_name,
                target,
                target_name,
                replace=replace,
                skip_oversize=skip_oversize,
            )
        else:
            infos = await require(source, source_name, ["list_sessions"], "migrate").list_sessions()
            with click.progressbar(
                length=sum(i.active + i.archived for i in infos),
                label=f"Migrating {source_name} -> {target_name}",
                file=sys.stderr,
                show_pos=True,
            ) as bar:
                report = await migrate_between(
                    source,
                    source_name,
                    target,
                    target_name,
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
    from aalis_core import run_async

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
    from aalis_core import run_async

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
    from aalis_core import run_async

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


# Nothing public: the commands join the CLI through ``MemoryCli``.
__all__: list[str] = []
