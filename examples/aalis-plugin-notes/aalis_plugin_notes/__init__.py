"""An example third-party Aalis plugin: per-session notes kept in the memory metadata store.

It shows every way a plugin takes part (docs/plugins/writing.md walks through it):
consuming the ``memory`` capability through a handle, a validated ``Config``, CLI commands
(``register_commands``), a clear type and ``memory_clear`` middleware, and an event listener.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_notes._notes import (
        NAMESPACE as NAMESPACE,
        Note as Note,
        Notes as Notes,
    )
    from aalis_plugin_notes._plugin import (
        NotesConfig as NotesConfig,
        NotesPlugin as NotesPlugin,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_notes._notes": "NAMESPACE Note Notes",
    "aalis_plugin_notes._plugin": "NotesConfig NotesPlugin",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "NAMESPACE",
    "Note",
    "Notes",
    "NotesConfig",
    "NotesPlugin",
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
