"""``aalis facts list|show|forget|edit|retract``: see and correct what it knows about people.

Each command starts the host, so the deriver first reads what an earlier process left
unread (``settle``), then answers from the memory store.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import click
from aalis_api_relation import Fact, PersonRef

from aalis_core import open_host, run_async

#: Seconds a command waits for the facts of messages not read yet.
SETTLE_S = 10.0


def _plugin(host: Any) -> Any:
    plugin = host.plugin("user-relation")
    states = {info.name: info for info in host.plugins()}
    info = states.get("user-relation")
    if plugin is None or info is None or info.state != "active":
        reason = info.error if info is not None and info.error else "not loaded"
        raise LookupError(f"the user-relation plugin is not active ({reason})")
    return plugin


async def _ready(host: Any) -> Any:
    plugin = _plugin(host)
    deriver, _ = plugin.active()
    await deriver.backfill()
    await deriver.settle(SETTLE_S)
    return plugin


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _line(fact: Fact) -> str:
    state = "current" if fact.current else f"superseded {_when(fact.superseded_at)}"
    if fact.current is False and fact.superseded_by:
        state += f" by {fact.superseded_by}"
    return (
        f"{fact.id}  {fact.person}  {fact.attribute}: {fact.value}  [{state}; "
        f"{fact.extractor}; from {len(fact.sources)} message(s): {', '.join(fact.sources) or '-'}]"
    )


async def _list(person: str | None, include_superseded: bool) -> list[Fact]:
    async with open_host() as host:
        plugin = await _ready(host)
        _, service = plugin.active()
        if person is not None:
            found: list[Fact] = await service.facts(
                PersonRef.parse(person), include_superseded=include_superseded
            )
            return found
        every = await plugin.store.all()
        shown = [f for f in every if include_superseded or f.current]
        return sorted(shown, key=lambda f: (str(f.person), f.attribute, f.valid_from))


@click.group("facts")
def facts_group() -> None:
    """What it knows about people: facts with their sources (docs/host/facts.md)."""


@facts_group.command("list")
@click.option("--person", metavar="PLATFORM:USER_ID", help="Only this person's facts.")
@click.option("--current", "current_only", is_flag=True, help="Leave out superseded facts.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_command(person: str | None, current_only: bool, as_json: bool) -> None:
    """List facts, superseded ones too (unless --current), with their source message ids."""
    if person is not None:
        try:
            PersonRef.parse(person)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--person") from None
    facts = run_async(_list(person, not current_only))
    if not facts:
        click.echo("no facts", err=True)
    for fact in facts:
        click.echo(json.dumps(fact.to_json(), ensure_ascii=False) if as_json else _line(fact))


async def _show(fact_id: str) -> list[str]:
    async with open_host() as host:
        plugin = await _ready(host)
        _, service = plugin.active()
        chain = await service.history(fact_id)
        lines: list[str] = []
        memory_service = plugin.store.memory
        for fact in chain:
            mark = "*" if fact.id == fact_id else " "
            lines.append(f"{mark} {_line(fact)}")
            lines.append(f"    said: {fact.text}")
            if fact.sources and hasattr(memory_service, "get_messages_by_ids"):
                for record in await memory_service.get_messages_by_ids(list(fact.sources)):
                    text = " ".join((record.message.content or "").split())
                    lines.append(f"    source {record.message.id} [{record.session_id}]: {text}")
        return lines


@facts_group.command("show")
@click.argument("fact_id")
def show_command(fact_id: str) -> None:
    """Show one fact, the facts it superseded and that superseded it, and their sources."""
    for line in run_async(_show(fact_id)):
        click.echo(line)


async def _forget(person: PersonRef) -> int:
    async with open_host() as host:
        plugin = await _ready(host)
        _, service = plugin.active()
        count: int = await service.forget(person)
        return count


@facts_group.command("forget")
@click.argument("person", metavar="PLATFORM:USER_ID")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def forget_command(person: str, yes: bool) -> None:
    """Erase every fact about PERSON (the messages stay; `aalis forget` erases those too)."""
    try:
        who = PersonRef.parse(person)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="PERSON") from None
    if not yes:
        click.confirm(f"erase every fact about {who}?", abort=True)
    count = run_async(_forget(who))
    click.echo(f"{count} facts about {who} erased")


async def _edit(fact_id: str, value: str) -> Fact:
    async with open_host() as host:
        plugin = await _ready(host)
        _, service = plugin.active()
        fact: Fact = await service.edit(fact_id, value, at=int(time.time() * 1000))
        return fact


@facts_group.command("edit")
@click.argument("fact_id")
@click.argument("value")
def edit_command(fact_id: str, value: str) -> None:
    """Correct a fact: VALUE supersedes it (the old value is kept in its history)."""
    if not value.strip():
        raise click.BadParameter("the new value must not be empty", param_hint="VALUE")
    click.echo(_line(run_async(_edit(fact_id, value))))


async def _retract(fact_id: str) -> None:
    async with open_host() as host:
        plugin = await _ready(host)
        _, service = plugin.active()
        await service.retract(fact_id)


@facts_group.command("retract")
@click.argument("fact_id")
def retract_command(fact_id: str) -> None:
    """Remove a wrong fact; the value it had superseded is current again."""
    run_async(_retract(fact_id))
    click.echo(f"fact {fact_id} retracted")


__all__ = ["facts_group"]
