"""``aalis compress SESSION``: compress one session now, through the ``compression`` capability."""

from __future__ import annotations

import click
from aalis_api_memory import COMPRESSION_ABSENT, compression
from aalis_memory_tools import SESSION

from aalis_core import open_host, run_async


async def compress_session(session_id: str) -> str:
    """Run a manual compression and describe it in one line."""
    async with open_host() as host:
        handle = host.capability(compression)
        if not handle.present:
            raise LookupError(COMPRESSION_ABSENT)
        service = handle.use
        detailed = getattr(service, "compress_detailed", None)
        if detailed is None:
            await service.compress(session_id, "manual")
            return f"Compressed session {session_id!r}."
        outcome = await detailed(session_id, "manual")
        if outcome.record is None:
            return f"Nothing to compress in session {session_id!r}."
        return (
            f"Compressed session {session_id!r}: {outcome.archived} messages archived, "
            f"{len(outcome.kept)} kept; summary by {outcome.model} "
            f"({len(outcome.record.text)} characters)."
        )


@click.command("compress")
@click.argument("session_id", metavar="SESSION", type=SESSION)
def compress_command(session_id: str) -> None:
    """Summarise SESSION's history now and archive the summarised messages."""
    click.echo(run_async(compress_session(session_id)))


__all__ = ["compress_command", "compress_session"]
