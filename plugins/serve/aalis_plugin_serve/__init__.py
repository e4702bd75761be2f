"""``aalis serve``: the memory as a JSON API, a live event stream and a web page.

See docs/host/serve.md.
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

_EXPORTS: dict[str, str] = {
    "create_app": "aalis_plugin_serve._app",
    "EventBroker": "aalis_plugin_serve._broker",
    "ServeConfig": "aalis_plugin_serve._config",
    "Serve": "aalis_plugin_serve._plugin",
}

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
