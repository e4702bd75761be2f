"""``AalisChatMessageHistory``: LangChain's chat history over any Aalis memory provider.

A LangChain app keeps its ``RunnableWithMessageHistory`` (or its LangGraph nodes) and gains
what the store behind Aalis offers: a durable backend chosen in ``aalis.toml``, archiving and
summaries from the compression plugin, and clears in which every plugin takes part.

The history never opens a store itself: it reads and writes through a memory *handle* of a
running host, so the host's provider selection, pins and clear holds all apply.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from aalis_agent import host_and_bridge, run_clear, save_conversation
from aalis_api_memory import (
    AalisMemoryError,
    ClearResult,
    MemoryService,
    Person,
    compression,
    history_cleared,
    memory as memory_capability,
)
from aalis_schema_message import Message
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, SystemMessage

from aalis_langchain._convert import AALIS_KEY, from_aalis, to_aalis

if TYPE_CHECKING:
    from aalis_core import Handle

T = TypeVar("T")

#: How the summary of archived turns is shown to LangChain (a system message at the head).
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


def _session_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"the session id must be a non-empty string, got {value!r}")
    return value


def _person(platform: str | None, user_id: str | None) -> Person | None:
    if user_id is None:
        return None
    if platform is None:
        raise ValueError("a user_id needs a platform: the person is (platform, user_id)")
    return Person(platform, user_id)


class ClearFailed(AalisMemoryError, RuntimeError):
    """The history of the session was not cleared; ``rows`` are ``run_clear``'s results."""

    def __init__(self, message: str, rows: Sequence[ClearResult]) -> None:
        super().__init__(message)
        self.rows = list(rows)


class AalisChatMessageHistory(BaseChatMessageHistory):
    """The messages of one Aalis session, as LangChain sees them.

    ``host`` is a started ``aalis_agent.SyncHost`` (for synchronous code, notebooks and
    LangChain's sync ``invoke``) or a started ``aalis_core.Host`` (for async code: use the
    ``a*`` methods, ``ainvoke``). ``memory`` is the handle to use (default: the host's own,
    consumer ``host``); pass ``host.capability(memory, "my-app")`` to pin a consumer.

    ``messages`` are the session's *active* messages (what compression archived is replaced
    by its summary, shown first as a system message when ``include_summary``); control
    markers are never shown. ``limit`` bounds how many conversation messages are read.

    ``user_id`` names the person who speaks in this history: with ``platform`` it is stamped
    on every user message saved (``metadata["user_id"]``), which is what recall's ``user``
    scope and forgetting a person go by. A message that already names its speaker keeps it.
    """

    def __init__(
        self,
        session_id: str,
        host: Any,
        *,
        memory: Handle[MemoryService] | None = None,
        platform: str | None = "langchain",
        user_id: str | None = None,
        include_summary: bool = True,
        limit: float = math.inf,
    ) -> None:
        self.session_id = _session_id(session_id)
        self.person = _person(platform, user_id)
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)
        self.platform = platform
        self.include_summary = include_summary
        self.limit = limit

    # -- plumbing ---------------------------------------------------------------------------

    def _sync(self, make: Callable[[], Awaitable[T]]) -> T:
        return self._bridge.call_sync(make)

    async def _async(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    async def _read(self) -> list[BaseMessage]:
        stored = await self._memory.use.get_history(self.session_id, self.limit)
        out: list[BaseMessage] = []
        if self.include_summary:
            summary = await self._summary()
            if summary is not None:
                out.append(
                    SystemMessage(
                        content=SUMMARY_PREFIX + summary,
                        additional_kwargs={AALIS_KEY: {"role": "system", "kind": "summary"}},
                    )
                )
        out.extend(from_aalis(m) for m in stored if not m.is_control)
        return out

    async def _summary(self) -> str | None:
        handle = self._host.capability(compression)
        if not handle.present:
            return None
        try:
            record = await handle.use.summary(self.session_id)
        except Exception:
            return None
        return record.text if record is not None else None

    async def _write(self, messages: Sequence[BaseMessage]) -> list[Message]:
        converted = [to_aalis(m, platform=self.platform) for m in messages]
        if self.person is not None:
            converted = [
                self.person.stamp(m, overwrite=False) if m.role == "user" else m for m in converted
            ]
        return await save_conversation(
            self._memory.use, self.session_id, converted, host=self._host
        )

    async def _clear(self) -> list[ClearResult]:
        rows = await run_clear(
            self._host, "session", session_id=self.session_id, memory=self._memory
        )
        if not history_cleared(rows):
            failed = "; ".join(f"{r.source}: {r.message}" for r in rows if not r.success)
            raise ClearFailed(f"session {self.session_id!r} was not cleared: {failed}", rows)
        return rows

    # -- LangChain's interface --------------------------------------------------------------

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return self._sync(self._read)

    async def aget_messages(self) -> list[BaseMessage]:
        return await self._async(self._read)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._sync(lambda: self._write(messages))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await self._async(lambda: self._write(messages))

    def clear(self) -> None:
        """Clear the session through ``run_clear``: every plugin's data for it goes (history,
        summary, vectors...), and a save made meanwhile lands after the clear."""
        self._sync(self._clear)

    async def aclear(self) -> None:
        await self._async(self._clear)

    def clear_rows(self) -> list[ClearResult]:
        """``clear()``, returning every plugin's result row (what was cleared, what failed)."""
        return self._sync(self._clear)

    def __repr__(self) -> str:
        return f"AalisChatMessageHistory(session_id={self.session_id!r})"


__all__ = ["SUMMARY_PREFIX", "AalisChatMessageHistory", "ClearFailed"]
