"""``aalis notes add SESSION TEXT`` and ``aalis notes list SESSION``.

Commands start the host with ``open_host()`` and go through the running plugin instance
(``host.plugin("notes")``), so they use the memory provider this plugin is bound to, the
same one its clear middleware works on. ``run_async`` turns any error into one line on
stderr and exit code 1.
"""

from __future__ import annotations

import datetime as dt
from typing import Protocol, runtime_checkable

import click

from aalis_core import open_host, run_async
from aalis_plugin_notes._notes import Note, Notes


@runtime_checkable
class NotesSource(Protocol):
    """The running ``NotesPlugin`` as the commands see it (``plugin.py`` imports this module
    to register the commands, so this one does not import ``plugin.py`` back)."""

    def notes(self) -> Notes: ...


async def _with_notes(session_id: str, text: str | None, person: str | None = None) -> list[Note]:
    async with open_host() as host:
        plugin = host.plugin("notes")
        state = next((i.state for i in host.plugins() if i.name == "notes"), None)
        if not isinstance(plugin, NotesSource) or state != "active":
            raise LookupError(f"the notes plugin is not active (state: {state or 'not loaded'})")
        notes = plugin.notes()
        if text is not None:
            return [await notes.add(session_id, text, person)]
        return await notes.list(session_id)


@click.group("notes")
def notes_group() -> None:
    """Per-session notes (plugin: notes)."""


@notes_group.command("add")
@click.argument("session_id", metavar="SESSION")
@click.argument("text")
@click.option(
    "--person",
    metavar="PLATFORM:USER_ID",
    help="Whose note this is (aalis forget --person removes it).",
)
def add_command(session_id: str, text: str, person: str | None) -> None:
    """Add a note to SESSION."""
    run_async(_with_notes(session_id, text, person))
    click.echo(f"Noted for {session_id}.")


@notes_group.command("list")
@click.argument("session_id", metavar="SESSION")
def list_command(session_id: str) -> None:
    """List SESSION's notes, oldest first."""
    notes = run_async(_with_notes(session_id, None))
    if not notes:
        click.echo(f"No notes for {session_id}.")
    for note in notes:
        when = dt.datetime.fromtimestamp(note.at / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")
        click.echo(f"{when}  {note.text}")


__all__ = ["notes_group"]
