"""Aalis vector store on SQLite: the embedded default ``vectorstore`` provider."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_vectorstore_sqlite._config import (
        SqliteVectorConfig as SqliteVectorConfig,
    )
    from aalis_plugin_vectorstore_sqlite._plugin import (
        PRIORITY as PRIORITY,
        VectorstoreSqlite as VectorstoreSqlite,
    )
    from aalis_plugin_vectorstore_sqlite._store import (
        SqliteVectorStore as SqliteVectorStore,
        StoreClosed as StoreClosed,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_vectorstore_sqlite._config": "SqliteVectorConfig",
    "aalis_plugin_vectorstore_sqlite._plugin": "PRIORITY VectorstoreSqlite",
    "aalis_plugin_vectorstore_sqlite._store": "SqliteVectorStore StoreClosed",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "PRIORITY",
    "SqliteVectorConfig",
    "SqliteVectorStore",
    "StoreClosed",
    "VectorstoreSqlite",
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
