"""The ``memory-postgres`` plugin: provides ``memory`` from a PostgreSQL server.

Priority 6 puts it below SQLite (10), the embedded default, so configuring a URI alone does not
move existing users' history to PostgreSQL; pinning ``[capabilities.memory] provider =
"memory-postgres"`` does. It sits above memory-mongodb (5) because its writes are real
transactions and it is tested against a real server; a host with both URIs configured and
nothing pinned gets PostgreSQL (docs/host/postgres.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aalis_api_memory import ServerMemoryProviderPlugin

from aalis_core import PluginContext
from aalis_plugin_memory_postgres._config import PostgresConfig

if TYPE_CHECKING:  # the store pulls in psycopg; imported in connect, when it is needed
    from aalis_plugin_memory_postgres._store import PostgresMemory

PRIORITY = 6


class MemoryPostgres(ServerMemoryProviderPlugin["PostgresMemory", PostgresConfig]):
    """Memory backend on PostgreSQL; disabled until ``uri`` is configured."""

    name = "memory-postgres"
    priority = PRIORITY
    Config = PostgresConfig

    async def connect(self, config: PostgresConfig, ctx: PluginContext) -> PostgresMemory:
        from aalis_plugin_memory_postgres._store import PostgresMemory

        return await PostgresMemory.connect(config, logger=ctx.logger)

    def log_fields(self, config: PostgresConfig) -> dict[str, object]:
        return {"schema": config.schema, "pool": f"{config.min_pool_size}-{config.max_pool_size}"}


__all__ = ["PRIORITY", "MemoryPostgres"]
