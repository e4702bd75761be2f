"""The ``memory-postgres`` plugin: provides ``memory`` from a PostgreSQL server.

Priority 6 puts it below SQLite (10), the embedded default, so configuring a URI alone does not
move existing users' history to PostgreSQL; pinning ``[capabilities.memory] provider =
"memory-postgres"`` does. It sits above memory-mongodb (5) because its writes are real
transactions and it is tested against a real server; a host with both URIs configured and
nothing pinned gets PostgreSQL (docs/host/postgres.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aalis_api_memory.provider import MemoryProviderPlugin

from aalis_core.context import PluginContext
from aalis_core.plugin import PluginDisabled
from aalis_plugin_memory_postgres.config import PostgresConfig
from aalis_plugin_memory_postgres.redaction import Redactor

if TYPE_CHECKING:  # the store pulls in psycopg; imported in start, when it is needed
    from aalis_plugin_memory_postgres.store import PostgresMemory

PRIORITY = 6


class MemoryPostgres(MemoryProviderPlugin["PostgresMemory"]):
    """Memory backend on PostgreSQL; disabled until ``uri`` is configured."""

    name = "memory-postgres"
    priority = PRIORITY
    Config = PostgresConfig

    async def open_store(self, ctx: PluginContext) -> PostgresMemory:
        config: PostgresConfig = ctx.config
        if config.uri is None:
            raise PluginDisabled("no uri configured")
        from aalis_plugin_memory_postgres.store import PostgresMemory

        display = Redactor(config.uri).display
        ctx.logger.debug("connecting", uri=display, schema=config.schema)
        store = await PostgresMemory.connect(config, logger=ctx.logger)
        ctx.logger.info(
            "connected",
            uri=display,
            schema=config.schema,
            pool=f"{config.min_pool_size}-{config.max_pool_size}",
        )
        return store


__all__ = ["PRIORITY", "MemoryPostgres"]
