"""``aalis serve``: the memory as a JSON API, a live event stream and a web page.

See docs/host/serve.md. Names are re-exported lazily: the host imports this package to list
and start the plugin (``aalis plugins``, every ``aalis`` command), and Starlette with its
server is only needed by ``aalis serve`` (``create_app``).
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_serve._app import (
        create_app as create_app,
    )
    from aalis_plugin_serve._broker import (
        EventBroker as EventBroker,
    )
    from aalis_plugin_serve._config import (
        ServeConfig as ServeConfig,
    )
    from aalis_plugin_serve._plugin import (
        Serve as Serve,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_serve._app": "create_app",
    "aalis_plugin_serve._broker": "EventBroker",
    "aalis_plugin_serve._config": "ServeConfig",
    "aalis_plugin_serve._plugin": "Serve",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "EventBroker",
    "Serve",
    "ServeConfig",
    "create_app",
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
