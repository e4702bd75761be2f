"""The ``vectorstore-pgvector`` plugin: the scale-out ``vectorstore`` on PostgreSQL + pgvector.

Priority 5 keeps vectorstore-sqlite (10), the embedded default, in place until
``[capabilities.vectorstore] provider = "vectorstore-pgvector"`` is pinned; without a ``uri``
the plugin is ``disabled``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_vectorstore import vectorstore

from aalis_core import Capability, Plugin, PluginContext, PluginDisabled, redact
from aalis_plugin_vectorstore_pgvector._config import PgvectorConfig

if TYPE_CHECKING:
    from aalis_plugin_vectorstore_pgvector._store import PgvectorStore

PRIORITY = 5


class VectorstorePgvector(Plugin):
    """Vectors in PostgreSQL; disabled until ``uri`` is configured."""

    name: ClassVar[str] = "vectorstore-pgvector"
    provides: ClassVar[tuple[Capability[Any], ...]] = (vectorstore,)
    Config: ClassVar[type[Any] | None] = PgvectorConfig

    def __init__(self) -> None:
        self.store: PgvectorStore | None = None

    async def start(self, ctx: PluginContext) -> None:
        config: PgvectorConfig = ctx.config  # validated by the host
        if config.uri is None:
            raise PluginDisabled("no uri configured")
        from aalis_plugin_vectorstore_pgvector._store import PgvectorStore

        self.store = await PgvectorStore.connect(config, logger=ctx.logger)
        ctx.provide(vectorstore, self.store, priority=PRIORITY)
        ctx.logger.info("connected", uri=redact(config.uri), schema=config.schema)

    async def stop(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            await store.close()


__all__ = ["PRIORITY", "VectorstorePgvector"]
