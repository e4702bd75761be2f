"""Aalis plugin ``mcp``: ``aalis mcp``, memory served to MCP clients over stdio."""

from aalis_plugin_mcp.config import McpConfig
from aalis_plugin_mcp.plugin import Mcp
from aalis_plugin_mcp.server import AalisMcpServer, build_server

__all__ = ["AalisMcpServer", "Mcp", "McpConfig", "build_server"]
