"""``LoopBridge``: call a host's coroutines from synchronous code or from another event loop.

Everything that touches storage is ``async`` and belongs to the event loop the host started
on (backends keep loop-bound resources: worker queues, client sessions). Frameworks that an
adapter plugs into call it synchronously (LangChain's ``history.messages``, LlamaIndex's
``get_messages``) or from a loop of their own; the bridge hands each call to the host's loop
and waits for it, so one store serves all of them without being opened twice.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aalis_api_memory import AalisMemoryError

T = TypeVar("T")


class BridgeDeadlock(AalisMemoryError, RuntimeError):
    """A synchronous call was made on the host's own event loop thread.

    Waiting there would block the very loop that has to run the call; use the ``async``
    variant (``aget_messages``, ``aadd_messages``...) or run the host with ``SyncHost``.
    """


class LoopBridge:
    """Runs coroutines on the loop that owns a host.

    ``loop`` is that loop; when None, it is learnt from the first ``await`` through the bridge
    (the usual case: a host opened with ``async with Host(...)`` in the same loop).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop

    @classmethod
    def here(cls) -> LoopBridge:
        """A bridge bound to the running loop, if any: an adapter built inside the host's
        loop can then serve synchronous calls from worker threads straight away."""
        try:
            return cls(asyncio.get_running_loop())
        except RuntimeError:
            return cls()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self._loop

    async def call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Await ``make()`` on the host's loop, from whichever loop the caller runs on."""
        running = asyncio.get_running_loop()
        if self._loop is None or self._loop.is_closed():
            self._loop = running
        if self._loop is running:
            return await make()
        future = asyncio.run_coroutine_threadsafe(_as_coroutine(make), self._loop)
        return await asyncio.wrap_future(future)

    def call_sync(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run ``make()`` to completion and return its result, from synchronous code.

        With no host loop known (a host not yet used from any loop), the call runs in a
        fresh loop of its own, which suits a host whose providers are loop-agnostic only;
        adapters therefore always pass the loop of a started host.
        """
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self._loop
        if loop is not None and loop is running:
            raise BridgeDeadlock(
                "a synchronous memory call was made on the host's own event loop; "
                "use the async method instead (e.g. aget_messages), or open the host with "
                "aalis_agent.SyncHost"
            )
        if loop is None or loop.is_closed():
            if running is not None:
                raise BridgeDeadlock(
                    "a synchronous memory call was made inside a running event loop before "
                    "the host's loop was known; use the async method instead"
                )
            return asyncio.run(_as_coroutine(make))
        future = asyncio.run_coroutine_threadsafe(_as_coroutine(make), loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the host did not answer within {timeout} s") from None


async def _as_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


def host_and_bridge(host: Any) -> tuple[Any, LoopBridge]:
    """The host to call, and the bridge to its loop, for what a user hands an adapter.

    A ``SyncHost`` carries both (``.host`` and ``.bridge``: it serves any loop, any thread); a
    host started by the caller runs on the caller's loop, so the bridge is this loop's. Every
    framework adapter takes either, so the choice lives here once.
    """
    bridge = getattr(host, "bridge", None)
    inner = getattr(host, "host", None)
    if isinstance(bridge, LoopBridge) and inner is not None:
        return inner, bridge
    return host, LoopBridge.here()


__all__ = ["BridgeDeadlock", "LoopBridge", "host_and_bridge"]
