"""Aalis vector store on PostgreSQL + pgvector: ``VectorstorePgvector`` (plugin), ``PgvectorStore``.

The store is imported lazily: listing plugins must not pay for psycopg.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aalis_plugin_vectorstore_pgvector.config import PgvectorConfig
    from aalis_plugin_vectorstore_pgvector.plugin import VectorstorePgvector
    from aalis_plugin_vectorstore_pgvector.store import PgvectorStore

_EXPORTS = {
    "PgvectorConfig": "aalis_plugin_vectorstore_pgvector.config",
    "PgvectorStore": "aalis_plugin_vectorstore_pgvector.store",
    "VectorstorePgvector": "aalis_plugin_vectorstore_pgvector.plugin",
}

__all__ = ["PgvectorConfig", "PgvectorStore", "VectorstorePgvector"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
