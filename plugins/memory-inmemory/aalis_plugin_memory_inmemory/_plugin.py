"""The ``memory-inmemory`` plugin: provides ``memory`` from process memory, at the lowest rank.

Priority -100 makes it the store of last resort, and ``volatile = True`` makes it no resort
at all for unpinned handles while a durable backend is installed: if memory-sqlite fails to
start, the memory capability is absent and says why, instead of every word going into RAM.
It is what tests and throwaway sessions pin explicitly (or load alone).
"""

from __future__ import annotations

from aalis_api_memory import MemoryProviderPlugin

from aalis_core import PluginContext
from aalis_plugin_memory_inmemory._config import InMemoryConfig
from aalis_plugin_memory_inmemory._store import InMemoryMemory

PRIORITY = -100


class MemoryInmemory(MemoryProviderPlugin[InMemoryMemory]):
    """Provides an ``InMemoryMemory`` and clears its history as clear type ``context``."""

    name = "memory-inmemory"
    priority = PRIORITY
    #: Nothing survives the process: an unpinned handle never binds here while a durable
    #: memory backend is installed (even a broken one); pin it to use it on purpose.
    volatile = True
    Config = InMemoryConfig

    async def open_store(self, ctx: PluginContext) -> InMemoryMemory:
        config: InMemoryConfig = ctx.config
        return InMemoryMemory(
            range_query_limit=config.range_query_limit,
            cross_session_max_limit=config.cross_session_max_limit,
            logger=ctx.logger,
        )


__all__ = ["PRIORITY", "MemoryInmemory"]
