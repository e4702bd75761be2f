"""Aalis memory backend on PostgreSQL (psycopg 3, asyncio, a connection pool).

``MemoryPostgres`` is the plugin (entry point ``memory-postgres``); ``PostgresMemory`` is the
store, usable on its own with ``await PostgresMemory.connect(PostgresConfig(uri=...))``.

Names are imported lazily: the host imports the plugin class of every installed plugin to list
it, and psycopg is only needed once a configured store connects.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_memory_postgres._config import (
        PostgresConfig as PostgresConfig,
    )
    from aalis_plugin_memory_postgres._plugin import (
        MemoryPostgres as MemoryPostgres,
    )
    from aalis_plugin_memory_postgres._store import (
        PostgresMemory as PostgresMemory,
        PostgresUnavailable as PostgresUnavailable,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_memory_postgres._config": "PostgresConfig",
    "aalis_plugin_memory_postgres._plugin": "MemoryPostgres",
    "aalis_plugin_memory_postgres._store": "PostgresMemory PostgresUnavailable",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "MemoryPostgres",
    "PostgresConfig",
    "PostgresMemory",
    "PostgresUnavailable",
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
