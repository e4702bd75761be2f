"""The ``memory-sqlite`` plugin: the default ``memory`` provider.

Priority 10 is the highest of the bundled backends (mongodb 5, inmemory -100), so with no
configuration at all the host's memory is this SQLite file under the data directory.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from aalis_api_memory import BackendUnavailable, MemoryProviderPlugin

from aalis_core import PluginContext
from aalis_plugin_memory_sqlite._config import SqliteConfig

if TYPE_CHECKING:
    from aalis_plugin_memory_sqlite._store import SqliteMemory

PRIORITY = 10


class StoreOpenFailed(BackendUnavailable):
    """The database file could not be opened, created or migrated."""

    def __init__(self, path: Path, cause: BaseException) -> None:
        code = getattr(cause, "sqlite_errorname", None)
        detail = str(cause) or type(cause).__name__
        if isinstance(cause, OSError) and cause.strerror:
            detail = cause.strerror
        super().__init__(f"cannot open {path}: {detail}" + (f" ({code})" if code else ""))


class MemorySqlite(MemoryProviderPlugin["SqliteMemory"]):
    """Provides a ``SqliteMemory`` on ``<data_dir>/<path>`` and clears its history as ``context``."""

    name = "memory-sqlite"
    priority = PRIORITY
    Config = SqliteConfig

    async def open_store(self, ctx: PluginContext) -> SqliteMemory:
        # Imported here, not at module level: every ``aalis`` command loads plugin classes,
        # and sqlite-utils (with what it pulls in) is only needed once the store opens.
        from aalis_plugin_memory_sqlite._store import SqliteMemory

        config: SqliteConfig = ctx.config
        store = SqliteMemory.from_config(config, ctx.data_dir, logger=ctx.logger)
        try:
            await store.open()
        except (sqlite3.Error, OSError) as exc:
            # The user reads this in every command's error line (the memory capability is
            # absent, never moved to RAM): say which file, what SQLite said, and its code.
            raise StoreOpenFailed(store.path, exc) from exc
        ctx.logger.info("memory store opened", path=str(store.path))
        return store


__all__ = ["PRIORITY", "MemorySqlite", "StoreOpenFailed"]
