"""The ``memory-postgres`` plugin: provides ``memory`` from a PostgreSQL server.

Priority 6 puts it below SQLite (10), the embedded default, so configuring a URI alone does not
move existing users' history to PostgreSQL; pinning ``[capabilities.memory] provider =
"memory-postgres"`` does. It sits above memory-mongodb (5) because its writes are real
transactions and it is tested against a real server; a host with both URIs configured and
nothing pinned gets PostgreSQL (docs/host/postgres.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_memory import CONTEXT_CLEAR_TYPE, ClearType, memory

from aalis_core.capability import Capability
from aalis_core.context import PluginContext
from aalis_core.markers import hookimpl
from aalis_core.plugin import Plugin, PluginDisabled
from aalis_plugin_memory_postgres.config import PostgresConfig
from aalis_plugin_memory_postgres.redaction import Redactor

if TYPE_CHECKING:  # the store pulls in psycopg; imported in start, when it is needed
    from aalis_plugin_memory_postgres.store import PostgresMemory

PRIORITY = 6


class MemoryPostgres(Plugin):
    """Memory backend on PostgreSQL; disabled until ``uri`` is configured."""

    name: ClassVar[str] = "memory-postgres"
    provides: ClassVar[tuple[Capability[Any], ...]] = (memory,)
    Config: ClassVar[type[Any] | None] = PostgresConfig

    def __init__(self) -> None:
        self.store: PostgresMemory | None = None

    async def start(self, ctx: PluginContext) -> None:
        config = ctx.config if isinstance(ctx.config, PostgresConfig) else PostgresConfig()
        if config.uri is None:
            raise PluginDisabled("no uri configured")
        from aalis_plugin_memory_postgres.store import PostgresMemory

        display = Redactor(config.uri).display
        ctx.logger.debug("connecting", uri=display, schema=config.schema)
        self.store = await PostgresMemory.connect(config, logger=ctx.logger)
        ctx.provide(memory, self.store, priority=PRIORITY)
        ctx.logger.info(
            "connected",
            uri=display,
            schema=config.schema,
            pool=f"{config.min_pool_size}-{config.max_pool_size}",
        )

    async def stop(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            await store.close()

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [CONTEXT_CLEAR_TYPE]


__all__ = ["PRIORITY", "MemoryPostgres"]
