"""``aalis mcp``: serve memory to an MCP client over stdio."""

from __future__ import annotations

import click

from aalis_core import open_host, run_async


async def serve() -> None:
    """Start the host, then answer MCP requests on stdin/stdout until the client leaves.

    stdout belongs to the protocol: the host's log lines go to stderr, as they always do.
    """
    async with open_host() as host:
        plugin = host.plugin("mcp")
        info = {i.name: i for i in host.plugins()}.get("mcp")
        if plugin is None or info is None or info.state != "active":
            reason = info.error if info is not None and info.error else "not loaded"
            raise LookupError(f"the mcp plugin is not active ({reason})")
        server = plugin.server()  # type: ignore[attr-defined]
        await server.run_stdio_async()


@click.command("mcp")
def mcp_command() -> None:
    """Serve this host's memory to an MCP client over stdio.

    Tools: list_sessions, get_history, get_metadata, list_metadata, search_recall (with a
    recall provider), get_facts (with a relation provider); save_message, save_metadata, delete_metadata with
    [plugins.mcp] allow_write = true; clear_session with allow_clear = true.
    """
    run_async(serve())


__all__ = ["mcp_command", "serve"]
