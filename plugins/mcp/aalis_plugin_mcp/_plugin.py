"""The ``mcp`` plugin: holds its capability handles and adds ``aalis mcp``.

It is a consumer like any other (consumer name ``mcp``), so ``[consumers.mcp]`` pins the
store an MCP client sees; the command borrows the started plugin's handles. Loading and
starting it imports no MCP SDK (docs/performance.md, start-up): only ``server()`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_memory import compression, memory

from aalis_core import Plugin, hookimpl
from aalis_plugin_mcp._config import McpConfig

if TYPE_CHECKING:
    from aalis_core import PluginContext
    from aalis_plugin_mcp._server import AalisMcpServer


class Mcp(Plugin):
    name = "mcp"
    uses: ClassVar[dict[str, Any]] = {"memory": memory, "compression": compression}
    Config: ClassVar[type[McpConfig]] = McpConfig

    def __init__(self) -> None:
        self.ctx: PluginContext | None = None

    async def start(self, ctx: PluginContext) -> None:
        self.ctx = ctx

    async def stop(self) -> None:
        self.ctx = None

    def server(self) -> AalisMcpServer:
        """The MCP server on this plugin's handles; the plugin must be active.

        The server module (the MCP SDK, about half a second to import) is imported here,
        not when the host loads the plugin: every ``aalis`` command loads it.
        """
        from aalis_plugin_mcp._server import RECALL, RELATION, build_server

        ctx = self.ctx
        if ctx is None:
            raise RuntimeError("the mcp plugin is not active")
        config: McpConfig = ctx.config  # validated by the host
        return build_server(
            ctx.host,
            ctx.caps.memory,
            config,
            compression=ctx.caps.compression,
            recall=ctx.host.capability(RECALL, self.name),
            relation=ctx.host.capability(RELATION, self.name),
        )

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from aalis_plugin_mcp._cli import mcp_command

        cli.add_command(mcp_command)


__all__ = ["Mcp"]
