"""Aalis memory backend on SQLite: WAL, a versioned schema, history reads that stay flat."""

from aalis_plugin_memory_sqlite.config import SqliteConfig
from aalis_plugin_memory_sqlite.schema import SCHEMA_VERSION, SchemaTooNew
from aalis_plugin_memory_sqlite.store import SqliteMemory, StoreClosed

__all__ = ["SCHEMA_VERSION", "SchemaTooNew", "SqliteConfig", "SqliteMemory", "StoreClosed"]
