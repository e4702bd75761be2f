"""Aalis plugin ``mcp``: ``aalis mcp``, memory served to MCP clients over stdio.

Names are re-exported lazily: the host imports this package to list and start the plugin
(``aalis plugins``, every ``aalis`` command), and the MCP SDK costs half a second to import;
only ``aalis mcp`` (``build_server``) needs it.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_mcp._config import (
        McpConfig as McpConfig,
    )
    from aalis_plugin_mcp._plugin import (
        Mcp as Mcp,
    )
    from aalis_plugin_mcp._server import (
        AalisMcpServer as AalisMcpServer,
        build_server as build_server,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_mcp._config": "McpConfig",
    "aalis_plugin_mcp._plugin": "Mcp",
    "aalis_plugin_mcp._server": "AalisMcpServer build_server",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "AalisMcpServer",
    "Mcp",
    "McpConfig",
    "build_server",
]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
