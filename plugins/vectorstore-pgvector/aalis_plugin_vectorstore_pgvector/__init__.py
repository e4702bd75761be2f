"""Aalis vector store on PostgreSQL + pgvector: ``VectorstorePgvector`` (plugin), ``PgvectorStore``.

The store is imported lazily: listing plugins must not pay for psycopg.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_vectorstore_pgvector._config import (
        PgvectorConfig as PgvectorConfig,
    )
    from aalis_plugin_vectorstore_pgvector._plugin import (
        VectorstorePgvector as VectorstorePgvector,
    )
    from aalis_plugin_vectorstore_pgvector._store import (
        PgvectorStore as PgvectorStore,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_vectorstore_pgvector._config": "PgvectorConfig",
    "aalis_plugin_vectorstore_pgvector._plugin": "VectorstorePgvector",
    "aalis_plugin_vectorstore_pgvector._store": "PgvectorStore",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "PgvectorConfig",
    "PgvectorStore",
    "VectorstorePgvector",
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
