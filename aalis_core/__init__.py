"""Aalis plugin host: plugins, capabilities and handles, hooks, events, config, CLI.

Names are re-exported lazily (module ``__getattr__``) so that ``import aalis_core`` stays
cheap: a CLI start-up or a plugin module that only needs ``hookimpl`` does not pay for
structlog, attrs, click and importlib_metadata.
"""

from __future__ import annotations

import importlib

# Not ``typing.TYPE_CHECKING``: importing typing alone costs more than the rest of this
# module; type checkers recognise the name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aalis_core.capability import Capability, CapabilityAbsent
    from aalis_core.config import ConfigError
    from aalis_core.context import PluginContext
    from aalis_core.errors import AalisError
    from aalis_core.handles import Handle
    from aalis_core.host import Host, PluginInfo
    from aalis_core.host_services import HostServices
    from aalis_core.logging import configure_logging, get_logger, redact
    from aalis_core.markers import hookimpl, hookspec
    from aalis_core.plugin import Plugin, PluginDisabled

_EXPORTS: dict[str, str] = {
    "AalisError": "aalis_core.errors",
    "Plugin": "aalis_core.plugin",
    "PluginDisabled": "aalis_core.plugin",
    "hookimpl": "aalis_core.markers",
    "hookspec": "aalis_core.markers",
    "Capability": "aalis_core.capability",
    "CapabilityAbsent": "aalis_core.capability",
    "Handle": "aalis_core.handles",
    "PluginContext": "aalis_core.context",
    "Host": "aalis_core.host",
    "PluginInfo": "aalis_core.host",
    "HostServices": "aalis_core.host_services",
    "ConfigError": "aalis_core.config",
    "get_logger": "aalis_core.logging",
    "redact": "aalis_core.logging",
    "configure_logging": "aalis_core.logging",
}

__all__ = [
    "AalisError",
    "Capability",
    "CapabilityAbsent",
    "ConfigError",
    "Handle",
    "Host",
    "HostServices",
    "Plugin",
    "PluginContext",
    "PluginDisabled",
    "PluginInfo",
    "configure_logging",
    "get_logger",
    "hookimpl",
    "hookspec",
    "redact",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aalis_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
