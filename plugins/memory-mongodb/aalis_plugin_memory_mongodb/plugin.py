"""The ``memory-mongodb`` plugin: provides ``memory`` from a MongoDB server.

Priority 5 puts it below SQLite (10), the embedded default, and above the in-memory store
(-100): configuring a URI alone does not move existing users' history to MongoDB; pinning
``[capabilities.memory] provider = "memory-mongodb"`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_memory import CONTEXT_CLEAR_TYPE, ClearType, memory

from aalis_core.capability import Capability
from aalis_core.context import PluginContext
from aalis_core.markers import hookimpl
from aalis_core.plugin import Plugin, PluginDisabled
from aalis_plugin_memory_mongodb.config import MongoConfig
from aalis_plugin_memory_mongodb.redaction import Redactor

if TYPE_CHECKING:  # the store pulls in pymongo; imported in start, when it is needed
    from aalis_plugin_memory_mongodb.store import MongoMemory

PRIORITY = 5


class MemoryMongodb(Plugin):
    """Memory backend on MongoDB; disabled until ``uri`` is configured."""

    name: ClassVar[str] = "memory-mongodb"
    provides: ClassVar[tuple[Capability[Any], ...]] = (memory,)
    Config: ClassVar[type[Any] | None] = MongoConfig

    def __init__(self) -> None:
        self.store: MongoMemory | None = None

    async def start(self, ctx: PluginContext) -> None:
        config = ctx.config if isinstance(ctx.config, MongoConfig) else MongoConfig()
        if config.uri is None:
            raise PluginDisabled("no uri configured")
        from aalis_plugin_memory_mongodb.store import MongoMemory

        display = Redactor(config.uri).display
        ctx.logger.debug("connecting", uri=display, database=config.database)
        self.store = await MongoMemory.connect(config, logger=ctx.logger)
        ctx.provide(memory, self.store, priority=PRIORITY)
        ctx.logger.info(
            "connected",
            uri=display,
            database=config.database,
            collection_prefix=config.collection_prefix,
        )

    async def stop(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            await store.close()

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [CONTEXT_CLEAR_TYPE]


__all__ = ["PRIORITY", "MemoryMongodb"]
