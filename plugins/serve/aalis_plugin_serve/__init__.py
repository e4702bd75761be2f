"""``aalis serve``: the memory as a JSON API, a live event stream and a web page.

See docs/host/serve.md. Names are re-exported lazily: the host imports this package to list
and start the plugin (``aalis plugins``, every ``aalis`` command), and Starlette with its
server is only needed by ``aalis serve`` (``create_app``).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aalis_plugin_serve.app import create_app
    from aalis_plugin_serve.broker import EventBroker
    from aalis_plugin_serve.config import ServeConfig
    from aalis_plugin_serve.plugin import Serve

_EXPORTS = {
    "EventBroker": "aalis_plugin_serve.broker",
    "Serve": "aalis_plugin_serve.plugin",
    "ServeConfig": "aalis_plugin_serve.config",
    "create_app": "aalis_plugin_serve.app",
}

__all__ = ["EventBroker", "Serve", "ServeConfig", "create_app"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aalis_plugin_serve' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
