"""``MemoryProviderPlugin``: the plugin half of a memory backend, written once.

Every memory backend's plugin does the same four things: it declares that it provides
``memory``, contributes the ``context`` clear type (so ``aalis clear -t context`` is valid
whichever backend runs), opens its store at start and provides it at its priority, and closes
the store at stop. A backend's plugin subclasses this class, sets ``name``, ``Config`` and
``priority``, and implements ``open_store``; docs/backends/implementing.md shows one.
"""

from __future__ import annotations

import inspect
from abc import abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from aalis_api_memory.capabilities import memory
from aalis_api_memory.clearing import CONTEXT_CLEAR_TYPE, ClearType
from aalis_core.capability import Capability
from aalis_core.context import PluginContext
from aalis_core.markers import hookimpl
from aalis_core.plugin import Plugin

StoreT = TypeVar("StoreT")


class MemoryProviderPlugin(Plugin, Generic[StoreT]):
    """Provides ``memory`` from the store ``open_store`` returns, at ``priority``.

    ``self.store`` is the open store between start and stop (None otherwise).
    """

    provides: ClassVar[tuple[Capability[Any], ...]] = (memory,)
    #: Unpinned consumers use the active memory provider with the highest priority
    #: (docs/host/providers.md): SQLite 10, PostgreSQL 6, MongoDB 5, in-memory -100.
    priority: ClassVar[int] = 0

    def __init__(self) -> None:
        self.store: StoreT | None = None

    @abstractmethod
    async def open_store(self, ctx: PluginContext) -> StoreT:
        """Build and open the store from ``ctx.config`` (an instance of ``Config``).

        Raise ``PluginDisabled`` when a required setting is missing (the plugin then shows
        as disabled, with the reason), or an error whose message says what failed.
        """

    async def start(self, ctx: PluginContext) -> None:
        store = await self.open_store(ctx)
        self.store = store
        ctx.provide(memory, store, priority=self.priority)

    async def stop(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            await self.close_store(store)

    async def close_store(self, store: StoreT) -> None:
        """Release ``store``: its ``close()``, awaited when it is a coroutine, if it has one."""
        close = getattr(store, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [CONTEXT_CLEAR_TYPE]


__all__ = ["MemoryProviderPlugin"]
