"""Aalis memory backend on SQLite: WAL, a versioned schema, history reads that stay flat.

Names are imported lazily: the host imports ``aalis_plugin_memory_sqlite._plugin`` for every
``aalis`` command, and the store's dependencies (sqlite-utils) are only needed once it opens.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_memory_sqlite._config import (
        SqliteConfig as SqliteConfig,
    )
    from aalis_plugin_memory_sqlite._plugin import (
        MemorySqlite as MemorySqlite,
    )
    from aalis_plugin_memory_sqlite._schema import (
        SCHEMA_VERSION as SCHEMA_VERSION,
        SchemaTooNew as SchemaTooNew,
    )
    from aalis_plugin_memory_sqlite._store import (
        SqliteMemory as SqliteMemory,
        StoreClosed as StoreClosed,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_memory_sqlite._config": "SqliteConfig",
    "aalis_plugin_memory_sqlite._plugin": "MemorySqlite",
    "aalis_plugin_memory_sqlite._schema": "SCHEMA_VERSION SchemaTooNew",
    "aalis_plugin_memory_sqlite._store": "SqliteMemory StoreClosed",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "SCHEMA_VERSION",
    "MemorySqlite",
    "SchemaTooNew",
    "SqliteConfig",
    "SqliteMemory",
    "StoreClosed",
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
