"""Aalis memory backend on PostgreSQL (psycopg 3, asyncio, a connection pool).

``MemoryPostgres`` is the plugin (entry point ``memory-postgres``); ``PostgresMemory`` is the
store, usable on its own with ``await PostgresMemory.connect(PostgresConfig(uri=...))``.

Names are imported lazily: the host imports the plugin class of every installed plugin to list
it, and psycopg is only needed once a configured store connects.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aalis_plugin_memory_postgres.config import PostgresConfig
    from aalis_plugin_memory_postgres.plugin import MemoryPostgres
    from aalis_plugin_memory_postgres.store import PostgresMemory, PostgresUnavailable

_EXPORTS = {
    "MemoryPostgres": "aalis_plugin_memory_postgres.plugin",
    "PostgresConfig": "aalis_plugin_memory_postgres.config",
    "PostgresMemory": "aalis_plugin_memory_postgres.store",
    "PostgresUnavailable": "aalis_plugin_memory_postgres.store",
}

__all__ = ["MemoryPostgres", "PostgresConfig", "PostgresMemory", "PostgresUnavailable"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
