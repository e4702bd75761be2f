"""``SyncHost``: the host and its memory for scripts, notebooks and synchronous frameworks.

A script should not have to write ``asyncio.run`` around every call, and a notebook already
runs an event loop of its own (where ``asyncio.run`` fails). ``SyncHost`` starts the host on
an event loop in a background thread and runs each call there, so every blocking method is
safe from plain code, from a notebook cell and from a framework's worker threads alike.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from aalis_api_memory import (
    ClearResult,
    MemoryService,
    PersonLike,
    Scope,
    compression as compression_capability,
    memory as memory_capability,
)
from aalis_schema_message import Message

from aalis_agent._bridge import LoopBridge
from aalis_agent._clearing import run_clear
from aalis_agent._turn import TurnResult, TurnSettings, run_turn
from aalis_core import Capability, Handle, Host, Plugin

T = TypeVar("T")

#: The ``llm`` capability, by name: the host binds by name, and this contract may not import
#: the llm contract that declares it.
LLM: Capability[Any] = Capability("llm", object)


class SyncMemory:
    """The blocking twin of a memory handle: every ``MemoryService`` method, awaited for you.

    ``sync.memory.get_history("s1")`` is ``await handle.use.get_history("s1")`` on the host's
    loop. Saves go through the handle, so a save during a clear waits like any other.
    """

    def __init__(self, bridge: LoopBridge, handle: Handle[MemoryService]) -> None:
        self._bridge = bridge
        self._handle = handle

    @property
    def present(self) -> bool:
        return bool(self._handle.present)

    @property
    def handle(self) -> Handle[MemoryService]:
        return self._handle

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        # ``supports(sync.memory, FullHistory)`` answers as the provider does: an optional
        # method the backend lacks raises AttributeError here too.
        method = getattr(self._handle.use, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._bridge.call_sync(lambda: method(*args, **kwargs))

        call.__name__ = name
        return call


class SyncHost:
    """A started ``Host`` behind blocking methods. Use it as a context manager::

        with SyncHost.from_config("aalis.toml") as aalis:
            aalis.memory.save_message("s1", Message(role="user", content="hi"))
            print(aalis.memory.get_history("s1"))

    ``config`` and ``plugins`` are ``Host``'s. ``close()`` stops the plugins and the loop.
    """

    def __init__(
        self,
        config: Any = None,
        plugins: Sequence[Plugin] = (),
        *,
        config_path: str | Path | None = None,
        discover: bool = True,
        hookspecs: Iterable[Any] = (),
        consumer: str = "host",
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="aalis-host-loop", daemon=True
        )
        self._thread.start()
        self.bridge = LoopBridge(self._loop)
        self._closed = False

        async def open_host() -> Host:
            if config_path is not None:
                host = Host.from_config(
                    config_path, plugins, discover=discover, hookspecs=hookspecs, consumer=consumer
                )
            else:
                host = Host(
                    config, plugins, discover=discover, hookspecs=hookspecs, consumer=consumer
                )
            await host.start()
            return host

        try:
            self.host: Host = self.bridge.call_sync(open_host)
        except BaseException:
            self._shutdown_loop()
            raise
        self.memory = SyncMemory(self.bridge, self.host.capability(memory_capability))

    @classmethod
    def from_config(
        cls, path: str | Path, plugins: Sequence[Plugin] = (), **kwargs: Any
    ) -> SyncHost:
        """Read ``aalis.toml`` at ``path``, as ``Host.from_config`` does."""
        return cls(None, plugins, config_path=path, **kwargs)

    # -- running anything -------------------------------------------------------------------

    def run(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run ``make()`` (a coroutine factory) on the host's loop and return its result."""
        self._check_open()
        return self.bridge.call_sync(make, timeout)

    def capability(self, cap: Capability[T], consumer: str | None = None) -> Handle[T]:
        """The host's handle on ``cap`` (``Host.capability``); its methods are async."""
        return self.host.capability(cap, consumer)

    def emit(self, event: str, **payload: Any) -> None:
        self.run(lambda: self.host.emit(event, **payload))

    def clear(
        self,
        scope: Scope = "session",
        session_id: str | None = None,
        types: Iterable[str] | None = None,
    ) -> list[ClearResult]:
        """``run_clear`` through this host's memory handle: every plugin takes part."""
        return self.run(
            lambda: run_clear(
                self.host, scope, session_id=session_id, types=types, memory=self.memory.handle
            )
        )

    def history(self, session_id: str, limit: float | None = math.inf) -> list[Message]:
        """The session's active messages, oldest first (``get_history``)."""
        return list(self.memory.get_history(session_id, limit))

    def turn(
        self,
        session_id: str,
        text: str,
        *,
        model: Any = None,
        settings: TurnSettings | None = None,
        compression: bool = True,
        person: PersonLike | None = None,
    ) -> TurnResult:
        """One agent turn (``run_turn``) on this host's memory: saves both messages, emits
        ``memory_messages_saved`` and ``token_usage`` (so automatic compression runs).

        ``model`` is any ``aalis_api_llm.ChatModel``; None uses the host's
        ``llm`` provider. ``compression`` False leaves the summary out of the prompt.
        ``person`` (``Person(platform, user_id)``) is who speaks; the user message carries it.
        """
        self._check_open()
        chosen = model if model is not None else self._llm()
        summary = self.host.capability(compression_capability) if compression else None

        async def one_turn() -> TurnResult:
            return await run_turn(
                self.host,
                self.memory.handle.use,
                chosen,
                session_id,
                text,
                settings=settings,
                compression=summary,
                person=person,
            )

        return self.run(one_turn)

    def _llm(self) -> Any:
        handle = self.host.capability(LLM)
        if not handle.present:
            raise LookupError(
                "no llm provider is active: configure one (e.g. [plugins.llm-openai]) "
                "or pass model= to turn()"
            )
        return handle.use

    def plugins(self) -> list[Any]:
        return self.host.plugins()

    # -- lifetime ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this SyncHost is closed")

    def close(self) -> None:
        """Stop every plugin, then the loop thread. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            self.bridge.call_sync(self.host.stop)
        finally:
            self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> SyncHost:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<SyncHost {state} {self.host!r}>"


__all__ = ["SyncHost", "SyncMemory"]
