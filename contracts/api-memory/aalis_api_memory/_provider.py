"""``MemoryProviderPlugin``: the plugin half of a memory backend, written once.

Every memory backend's plugin does the same four things: it declares that it provides
``memory``, contributes the ``context`` clear type (so ``aalis clear -t context`` is valid
whichever backend runs), opens its store at start and provides it at its priority, and closes
the store at stop. A backend's plugin subclasses this class, sets ``name``, ``Config`` and
``priority``, and implements ``open_store``; docs/backends/implementing.md shows one.

``ServerMemoryProviderPlugin`` adds what a backend on a database server (MongoDB,
PostgreSQL) also shares: it stays disabled until ``uri`` is configured, and logs the
connection with the URI redacted (docs/host/redaction.md).
"""

from __future__ import annotations

import inspect
from abc import abstractmethod
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from aalis_api_memory._capabilities import memory
from aalis_api_memory._clearing import CONTEXT_CLEAR_TYPE, ClearType
from aalis_core import Capability, Plugin, PluginContext, PluginDisabled, UriRedactor, hookimpl

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


class ServerConfig(Protocol):
    """What ``ServerMemoryProviderPlugin`` reads of its ``Config``: the server's URI."""

    @property
    def uri(self) -> str | None: ...


ServerConfigT = TypeVar("ServerConfigT", bound=ServerConfig)


class ServerMemoryProviderPlugin(MemoryProviderPlugin[StoreT], Generic[StoreT, ServerConfigT]):
    """A memory backend on a server: disabled until ``uri`` is set, connected in ``connect``.

    The ``connecting`` (debug) and ``connected`` (info) log lines carry the redacted URI and
    what ``log_fields`` returns (the database, the schema, ...).
    """

    @abstractmethod
    async def connect(self, config: ServerConfigT, ctx: PluginContext) -> StoreT:
        """Connect to ``config.uri`` (set) and prepare the store.

        Fail with one error whose message names the server redacted, within the configured
        timeouts: the host shows it as the plugin's start error.
        """

    def log_fields(self, config: ServerConfigT) -> dict[str, object]:
        """What the connection log lines say besides the URI."""
        return {}

    async def open_store(self, ctx: PluginContext) -> StoreT:
        config: ServerConfigT = ctx.config
        if config.uri is None:
            raise PluginDisabled("no uri configured")
        display = UriRedactor(config.uri).display
        fields = self.log_fields(config)
        ctx.logger.debug("connecting", uri=display, **fields)
        store = await self.connect(config, ctx)
        ctx.logger.info("connected", uri=display, **fields)
        return store


__all__ = ["MemoryProviderPlugin", "ServerConfig", "ServerMemoryProviderPlugin"]
