"""``aalis forget --person PLATFORM:USER_ID``: erase one person everywhere.

A client of ``forget_person`` like ``aalis clear`` is of ``run_clear``: one line per layer
with its counts, exit status 1 when a layer failed. It asks first (on a terminal) since
nothing brings the words back; scripts pass ``--yes``. What it removes and what it cannot
is in docs/host/privacy.md.
"""

from __future__ import annotations

import click
from aalis_agent import forget_person
from aalis_api_memory import ForgetResult, Person, memory


async def _forget(person: Person) -> list[ForgetResult]:
    from aalis_core import open_host

    async with open_host() as host:
        # Without the store every other layer would say "done" while the words stay on
        # disk: refuse with the reason the store is absent instead.
        _ = host.capability(memory).use  # absent: CapabilityAbsent says which provider and why
        return await forget_person(host, person)


def result_line(row: ForgetResult) -> str:
    status = "ok" if row.success else "FAILED"
    counts = ", ".join(f"{key} {value}" for key, value in row.counts.items())
    shown = f" ({counts})" if counts else ""
    return f"{status:<6} {row.source}: {row.message}{shown}"


def _person(ctx: click.Context, param: click.Parameter, value: str) -> Person:
    try:
        return Person.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _confirm(person: Person) -> None:
    import sys

    if not sys.stdin.isatty():
        raise click.UsageError(
            f"forget erases {person} for good; not on a terminal, so pass --yes to confirm"
        )
    question = (
        f"Erase {person}: their private sessions whole, their messages in groups, and what "
        "every plugin derived from them?"
    )
    if not click.confirm(question, default=False):
        click.echo("Nothing erased.", err=True)
        click.get_current_context().exit(1)


@click.command("forget")
@click.option(
    "--person",
    "person",
    required=True,
    metavar="PLATFORM:USER_ID",
    callback=_person,
    help="The person to erase, e.g. telegram:42.",
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask first (needed when not on a terminal).")
def forget_command(person: Person, yes: bool) -> None:
    """Erase a person: their private sessions, their messages in groups, archives, vectors,
    summaries and what plugins keep about them.

    Prints one line per layer with counts; exits with status 1 if any of them failed.
    """
    from aalis_core import run_async

    if not yes:
        _confirm(person)
    results = run_async(_forget(person))
    for row in results:
        click.echo(result_line(row))
    if any(not row.success for row in results) or not results:
        click.get_current_context().exit(1)


# Nothing public: the commands join the CLI through ``MemoryCli``.
__all__: list[str] = []
