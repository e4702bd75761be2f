"""The ``memory-mongodb`` plugin: provides ``memory`` from a MongoDB server.

Priority 5 puts it below SQLite (10), the embedded default, and above the in-memory store
(-100): configuring a URI alone does not move existing users' history to MongoDB; pinning
``[capabilities.memory] provider = "memory-mongodb"`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aalis_api_memory import ServerMemoryProviderPlugin

from aalis_core import PluginContext
from aalis_plugin_memory_mongodb._config import MongoConfig

if TYPE_CHECKING:  # the store pulls in pymongo; imported in connect, when it is needed
    from aalis_plugin_memory_mongodb._store import MongoMemory

PRIORITY = 5


class MemoryMongodb(ServerMemoryProviderPlugin["MongoMemory", MongoConfig]):
    """Memory backend on MongoDB; disabled until ``uri`` is configured."""

    name = "memory-mongodb"
    priority = PRIORITY
    Config = MongoConfig

    async def connect(self, config: MongoConfig, ctx: PluginContext) -> MongoMemory:
        from aalis_plugin_memory_mongodb._store import MongoMemory

        return await MongoMemory.connect(config, logger=ctx.logger)

    def log_fields(self, config: MongoConfig) -> dict[str, object]:
        return {"database": config.database, "collection_prefix": config.collection_prefix}


__all__ = ["PRIORITY", "MemoryMongodb"]
