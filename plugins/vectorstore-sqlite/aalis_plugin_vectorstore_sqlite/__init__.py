"""Aalis vector store on SQLite: the embedded default ``vectorstore`` provider."""

from aalis_plugin_vectorstore_sqlite.config import SqliteVectorConfig
from aalis_plugin_vectorstore_sqlite.plugin import PRIORITY, VectorstoreSqlite

__all__ = [
    "PRIORITY",
    "SqliteVectorConfig",
    "SqliteVectorStore",
    "StoreClosed",
    "VectorstoreSqlite",
]


def __getattr__(name: str) -> object:
    # The store pulls in numpy; keep ``import aalis_plugin_vectorstore_sqlite`` light.
    if name in ("SqliteVectorStore", "StoreClosed"):
        from aalis_plugin_vectorstore_sqlite import store

        return getattr(store, name)
    raise AttributeError(name)
