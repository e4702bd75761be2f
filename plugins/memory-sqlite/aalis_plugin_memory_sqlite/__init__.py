"""Aalis memory backend on SQLite: WAL, a versioned schema, history reads that stay flat.

Names are imported lazily: the host imports ``aalis_plugin_memory_sqlite.plugin`` for every
``aalis`` command, and the store's dependencies (sqlite-utils) are only needed once it opens.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aalis_plugin_memory_sqlite.config import SqliteConfig
    from aalis_plugin_memory_sqlite.schema import SCHEMA_VERSION, SchemaTooNew
    from aalis_plugin_memory_sqlite.store import SqliteMemory, StoreClosed

_LAZY = {
    "SqliteConfig": "aalis_plugin_memory_sqlite.config",
    "SCHEMA_VERSION": "aalis_plugin_memory_sqlite.schema",
    "SchemaTooNew": "aalis_plugin_memory_sqlite.schema",
    "SqliteMemory": "aalis_plugin_memory_sqlite.store",
    "StoreClosed": "aalis_plugin_memory_sqlite.store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["SCHEMA_VERSION", "SchemaTooNew", "SqliteConfig", "SqliteMemory", "StoreClosed"]
