"""Aalis plugin ``mcp``: ``aalis mcp``, memory served to MCP clients over stdio.

Names are re-exported lazily: the host imports this package to list and start the plugin
(``aalis plugins``, every ``aalis`` command), and the MCP SDK costs half a second to import;
only ``aalis mcp`` (``build_server``) needs it.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aalis_plugin_mcp.config import McpConfig
    from aalis_plugin_mcp.plugin import Mcp
    from aalis_plugin_mcp.server import AalisMcpServer, build_server

_EXPORTS = {
    "AalisMcpServer": "aalis_plugin_mcp.server",
    "Mcp": "aalis_plugin_mcp.plugin",
    "McpConfig": "aalis_plugin_mcp.config",
    "build_server": "aalis_plugin_mcp.server",
}

__all__ = ["AalisMcpServer", "Mcp", "McpConfig", "build_server"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aalis_plugin_mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
