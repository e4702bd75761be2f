"""``aalis chat [--session S] [--script FILE]``: the main job, interactive or scripted."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click
from aalis_api_memory import memory

from aalis_core import Host, open_host, run_async
from aalis_plugin_chat._session import ChatSession, Reply

PROMPT = "you> "


def _print(reply: Reply) -> None:
    for line in reply.out:
        click.echo(line)
    for line in reply.err:
        click.echo(line, err=True)


async def _read_line() -> str | None:
    """One line from the terminal without blocking the event loop (auto compression runs)."""
    try:
        return await asyncio.to_thread(input, PROMPT)
    except EOFError:
        return None


def store_label(host: Host, provider: str | None, service: Any) -> str:
    """Where the conversation is written, for the banner: ``memory-sqlite (.aalis/aalis.db)``.

    A store that says where it lives (``path``, or a redacted ``location``) is shown with it;
    a volatile one says that nothing outlives the process, so no one mistakes it for disk.
    """
    where = getattr(service, "location", None) or getattr(service, "path", None)
    label = f"{provider} ({where})" if where else str(provider)
    plugin = host.plugin(provider) if provider is not None else None
    volatile = getattr(plugin, "volatile", False) is True
    return label + (" - in memory only, gone at exit" if volatile else "")


async def run_chat(session_id: str, script: list[str] | None) -> int:
    """Run the chat on the terminal, or on ``script``'s lines; returns the exit code
    (1 when any line failed)."""
    async with open_host() as host:
        plugin = host.plugin("chat")
        states = {info.name: info for info in host.plugins()}
        info = states.get("chat")
        if plugin is None or info is None or info.state != "active":
            reason = info.error if info is not None and info.error else "not loaded"
            raise LookupError(f"the chat plugin is not active ({reason})")
        # Refuse to start rather than chat into nowhere: with the durable store broken the
        # handle is absent and CapabilityAbsent says which provider failed and why.
        store = host.capability(memory, "chat")
        _ = store.use
        session: ChatSession = plugin.session(session_id)  # type: ignore[attr-defined]
        session.notify = lambda line: click.echo(line, err=True)
        failed = False
        click.echo(
            f"chat in session {session_id!r} with {session.model_name}, history in "
            f"{store_label(host, store.provider, store.use)}; /help for commands"
        )
        if script is None:
            while True:
                line = await _read_line()
                if line is None:
                    click.echo()
                    break
                reply = await session.handle(line)
                _print(reply)
                failed = failed or reply.failed
                if reply.quit:
                    break
        else:
            for line in script:
                if not line.strip():
                    continue
                click.echo(f"{PROMPT}{line}")
                reply = await session.handle(line)
                _print(reply)
                failed = failed or reply.failed
                if reply.quit:
                    break
        return 1 if failed else 0


@click.command("chat")
@click.option(
    "--session",
    "session_id",
    default="cli",
    show_default=True,
    metavar="S",
    help="Session id to chat in.",
)
@click.option(
    "--script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read input lines from FILE instead of the terminal (one per line).",
)
def chat_command(session_id: str, script: Path | None) -> None:
    """Chat with the configured model (or the offline stand-in) in one session.

    History, /clear, /compress and automatic compression run through the installed plugins.
    """
    lines = None
    if script is not None:
        try:
            lines = script.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise click.ClickException(f"cannot read {script}: {exc}") from None
    code = run_async(run_chat(session_id, lines))
    sys.exit(code)


__all__ = ["chat_command", "run_chat"]
