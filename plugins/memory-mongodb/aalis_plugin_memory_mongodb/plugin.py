"""The ``memory-mongodb`` plugin: provides ``memory`` from a MongoDB server.

Priority 5 puts it below SQLite (10), the embedded default, and above the in-memory store
(-100): configuring a URI alone does not move existing users' history to MongoDB; pinning
``[capabilities.memory] provider = "memory-mongodb"`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aalis_api_memory.provider import MemoryProviderPlugin

from aalis_core.context import PluginContext
from aalis_core.plugin import PluginDisabled
from aalis_plugin_memory_mongodb.config import MongoConfig
from aalis_plugin_memory_mongodb.redaction import Redactor

if TYPE_CHECKING:  # the store pulls in pymongo; imported in start, when it is needed
    from aalis_plugin_memory_mongodb.store import MongoMemory

PRIORITY = 5


class MemoryMongodb(MemoryProviderPlugin["MongoMemory"]):
    """Memory backend on MongoDB; disabled until ``uri`` is configured."""

    name = "memory-mongodb"
    priority = PRIORITY
    Config = MongoConfig

    async def open_store(self, ctx: PluginContext) -> MongoMemory:
        config: MongoConfig = ctx.config
        if config.uri is None:
            raise PluginDisabled("no uri configured")
        from aalis_plugin_memory_mongodb.store import MongoMemory

        display = Redactor(config.uri).display
        ctx.logger.debug("connecting", uri=display, database=config.database)
        store = await MongoMemory.connect(config, logger=ctx.logger)
        ctx.logger.info(
            "connected",
            uri=display,
            database=config.database,
            collection_prefix=config.collection_prefix,
        )
        return store


__all__ = ["PRIORITY", "MemoryMongodb"]
