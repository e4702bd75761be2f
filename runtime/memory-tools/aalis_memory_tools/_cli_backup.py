"""``aalis backup FILE``: an online, consistent copy of the memory store.

The command is a client of the contract like the others: it asks the bound backend for the
optional extension ``backup(destination)`` (memory-sqlite implements it with ``VACUUM
INTO``; docs/backends/sqlite.md explains backups and restores). A backend without it is
named, with what to use instead; a volatile store is refused (there is nothing on disk to
copy); and, as for ``export --all``, a consumer pinned to another store is named rather
than silently left out of the backup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from aalis_api_memory import memory

from aalis_memory_tools._transfer import (
    TransferError,
    left_out,
    left_out_text,
    refuse_volatile,
    require,
)


async def backup_command_impl(output: Path, from_: str | None) -> tuple[str | None, Any]:
    from aalis_core import open_host

    async with open_host() as host:
        handle = (
            host.capability(memory) if from_ is None else host.capability(memory, provider=from_)
        )
        service: Any = handle.use  # absent: CapabilityAbsent says which provider failed and why
        refuse_volatile(host, handle.provider, "backup")
        require(service, handle.provider, ["backup"], "backup")
        if from_ is None:
            missing = left_out(host, [handle.provider])
            if missing:
                raise TransferError(
                    f"`aalis backup` copies {handle.provider} and would leave out "
                    f"{left_out_text(missing)}; back up each store by name with --from "
                    "(nothing was written)"
                )
        result = await service.backup(output)
        return handle.provider, result


@click.command("backup")
@click.argument("output", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--from",
    "from_",
    metavar="PROVIDER",
    help="Back up this memory provider instead of the configured one.",
)
def backup_command(output: Path, from_: str | None) -> None:
    """Write a consistent copy of the memory store to FILE while it stays in use.

    For SQLite the copy is one self-contained database file; restore it with the store
    stopped (docs/backends/sqlite.md, "Backups and restores").
    """
    from aalis_core import run_async

    provider, result = run_async(backup_command_impl(output, from_))
    size = getattr(result, "bytes", None)
    messages = getattr(result, "messages", None)
    details = ", ".join(
        part
        for part in (
            f"{messages} messages" if messages is not None else "",
            f"{size} bytes" if size is not None else "",
        )
        if part
    )
    click.echo(f"Backed up {provider} to {output}" + (f" ({details})" if details else "") + ".")


# Nothing public: the commands join the CLI through ``MemoryCli``.
__all__: list[str] = []
