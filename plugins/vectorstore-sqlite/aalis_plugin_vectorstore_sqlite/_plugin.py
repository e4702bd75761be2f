"""The ``vectorstore-sqlite`` plugin: the embedded default ``vectorstore`` provider.

Priority 10 makes it win an unpinned handle over any store that ranks lower, so with no
configuration the vectors live in ``<data_dir>/aalis-vectors.db`` beside the message store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aalis_api_vectorstore import vectorstore

from aalis_core import Plugin, PluginContext
from aalis_plugin_vectorstore_sqlite._config import SqliteVectorConfig

if TYPE_CHECKING:
    from aalis_plugin_vectorstore_sqlite._store import SqliteVectorStore

PRIORITY = 10


class VectorstoreSqlite(Plugin):
    """Provides a ``SqliteVectorStore`` on ``<data_dir>/<path>``."""

    name = "vectorstore-sqlite"
    provides = (vectorstore,)
    Config = SqliteVectorConfig

    def __init__(self) -> None:
        self.store: SqliteVectorStore | None = None

    async def start(self, ctx: PluginContext) -> None:
        # numpy is imported with the store, not with the plugin class: every ``aalis``
        # command loads plugin classes, and only a started store needs numpy.
        from aalis_plugin_vectorstore_sqlite._store import SqliteVectorStore

        config: SqliteVectorConfig = ctx.config  # validated by the host
        store = SqliteVectorStore.from_config(config, ctx.data_dir, logger=ctx.logger)
        await store.open()
        self.store = store
        ctx.logger.info("vector store opened", path=str(store.path))
        ctx.provide(vectorstore, store, priority=PRIORITY)

    async def stop(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            await store.close()


__all__ = ["PRIORITY", "VectorstoreSqlite"]
