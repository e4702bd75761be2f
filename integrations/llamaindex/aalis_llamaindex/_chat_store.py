"""``AalisChatStore``: a LlamaIndex chat store over any Aalis memory provider.

LlamaIndex memories (``ChatMemoryBuffer``, ``ChatSummaryMemoryBuffer``) keep their messages
in a ``BaseChatStore`` under a key; here the key is the Aalis session id, so a LlamaIndex
agent and ``aalis chat`` (or a LangChain app) can share one conversation, and the store
behind it is whatever ``aalis.toml`` chose.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from aalis_agent import LoopBridge, host_and_bridge, run_clear, save_conversation
from aalis_api_memory import (
    AalisMemoryError,
    ClearResult,
    FullHistory,
    MemoryService,
    MessagesById,
    Person,
    Rewrite,
    Transfer,
    history_cleared,
    memory as memory_capability,
    supports,
)
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store.base import BaseChatStore
from pydantic import PrivateAttr

from aalis_llamaindex._convert import from_aalis, to_aalis

if TYPE_CHECKING:
    from aalis_core import Handle

T = TypeVar("T")


class ClearFailed(AalisMemoryError, RuntimeError):
    """The session's history was not cleared; ``rows`` are ``run_clear``'s results."""

    def __init__(self, message: str, rows: list[ClearResult]) -> None:
        super().__init__(message)
        self.rows = rows


def _key(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"the key (an Aalis session id) must be a non-empty string, got {value!r}")
    return value


class AalisChatStore(BaseChatStore):
    """LlamaIndex's chat store on an Aalis host; a key is a session id.

    ``host`` is a started ``aalis_agent.SyncHost`` (sync methods from anywhere, async
    ones from any loop) or a started ``aalis_core.Host`` (async methods, in its loop).
    ``memory`` is the handle to use (default: the host's own).

    Semantics on an Aalis session: ``get_messages`` reads the *active* messages (archived
    ones are behind the compression summary), control markers left out. ``delete_messages``
    and ``set_messages`` clear through ``run_clear`` (history, summary, vectors: every
    plugin's data for the session), so a replaced conversation leaves no stale summary.
    ``delete_message`` deletes one message by its timestamp and announces it
    (``memory_messages_deleted``, ``history_changed``). ``get_keys`` needs a backend with
    ``list_sessions`` (every backend in the repository has it).

    ``user_id`` names the person who speaks: with ``platform`` it is stamped on every user
    message saved (``metadata["user_id"]``), which is what recall's ``user`` scope and
    forgetting a person go by; a message that already names its speaker keeps it.
    """

    platform: str | None = "llamaindex"
    user_id: str | None = None
    _host: Any = PrivateAttr()
    _bridge: LoopBridge = PrivateAttr()
    _memory: Any = PrivateAttr()

    def __init__(
        self, host: Any, *, memory: Handle[MemoryService] | None = None, **data: Any
    ) -> None:
        super().__init__(**data)
        self._person()  # a bad person is refused here, before anything is written
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)

    @classmethod
    def class_name(cls) -> str:
        return "AalisChatStore"

    # -- plumbing ---------------------------------------------------------------------------

    def _sync(self, make: Callable[[], Awaitable[T]]) -> T:
        return self._bridge.call_sync(make)

    async def _async(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    def _person(self) -> Person | None:
        if self.user_id is None:
            return None
        if self.platform is None:
            raise ValueError("a user_id needs a platform: the person is (platform, user_id)")
        return Person(self.platform, self.user_id)

    def _convert(self, messages: list[ChatMessage]) -> list[Any]:
        converted = [to_aalis(m, platform=self.platform) for m in messages]
        person = self._person()
        if person is None:
            return converted
        return [person.stamp(m, overwrite=False) if m.role == "user" else m for m in converted]

    async def _stored(self, key: str) -> list[Any]:
        messages = await self._memory.use.get_history(_key(key), math.inf)
        return [m for m in messages if not m.is_control]

    async def _get(self, key: str) -> list[ChatMessage]:
        return [from_aalis(m) for m in await self._stored(key)]

    async def _add(self, key: str, messages: list[ChatMessage]) -> None:
        converted = self._convert(messages)
        await save_conversation(self._memory.use, _key(key), converted, host=self._host)

    async def _clear(self, key: str) -> list[ChatMessage]:
        before = await self._get(key)
        rows = await run_clear(self._host, "session", session_id=key, memory=self._memory)
        if not history_cleared(rows):
            failed = "; ".join(f"{r.source}: {r.message}" for r in rows if not r.success)
            raise ClearFailed(f"session {key!r} was not cleared: {failed}", rows)
        return before

    async def _set(self, key: str, messages: list[ChatMessage]) -> None:
        converted = self._convert(messages)  # refuse first
        await self._clear(_key(key))
        await save_conversation(self._memory.use, key, converted, host=self._host)

    async def _delete_at(self, key: str, idx: int) -> ChatMessage | None:
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError(f"idx must be an int, got {type(idx).__name__}")
        stored = await self._stored(key)
        if not -len(stored) <= idx < len(stored):
            return None
        target = stored[idx]
        service: MemoryService = self._memory.use
        ids: list[str] = []
        if target.id is not None and supports(service, MessagesById, "delete_messages_by_ids"):
            # By id: exact even when another message shares the millisecond.
            await service.delete_messages_by_ids(key, [target.id])
            ids = [target.id]
        else:
            if not supports(service, Rewrite, "delete_messages_by_timestamps"):
                raise NotImplementedError(
                    "this memory provider cannot delete single messages "
                    "(no delete_messages_by_ids or delete_messages_by_timestamps)"
                )
            # get_full_history is not checked: AttributeError without it, as before.
            everything = await cast(FullHistory, service).get_full_history(key, math.inf)
            if sum(1 for m in everything if m.timestamp == target.timestamp) > 1:
                raise ValueError(
                    f"message {idx} of session {key!r} shares its timestamp with another "
                    "message; deleting by timestamp would remove both, so nothing was deleted"
                )
            await service.delete_messages_by_timestamps(key, [target.timestamp])
        await self._host.emit(
            "memory_messages_deleted", session_id=key, timestamps=[target.timestamp], ids=ids
        )
        await self._host.emit("history_changed", session_id=key)
        return from_aalis(target)

    async def _keys(self) -> list[str]:
        service: MemoryService = self._memory.use
        if not supports(service, Transfer, "list_sessions"):
            raise NotImplementedError("this memory provider cannot list sessions")
        return [info.session_id for info in await service.list_sessions()]

    # -- LlamaIndex's interface -------------------------------------------------------------

    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        self._sync(lambda: self._set(key, list(messages)))

    async def aset_messages(self, key: str, messages: list[ChatMessage]) -> None:
        await self._async(lambda: self._set(key, list(messages)))

    def get_messages(self, key: str) -> list[ChatMessage]:
        return self._sync(lambda: self._get(key))

    async def aget_messages(self, key: str) -> list[ChatMessage]:
        return await self._async(lambda: self._get(key))

    def add_message(self, key: str, message: ChatMessage) -> None:
        self._sync(lambda: self._add(key, [message]))

    async def async_add_message(self, key: str, message: ChatMessage) -> None:
        await self._async(lambda: self._add(key, [message]))

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        return self._sync(lambda: self._clear(_key(key)))

    async def adelete_messages(self, key: str) -> list[ChatMessage] | None:
        return await self._async(lambda: self._clear(_key(key)))

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        return self._sync(lambda: self._delete_at(key, idx))

    async def adelete_message(self, key: str, idx: int) -> ChatMessage | None:
        return await self._async(lambda: self._delete_at(key, idx))

    def delete_last_message(self, key: str) -> ChatMessage | None:
        return self._sync(lambda: self._delete_at(key, -1))

    async def adelete_last_message(self, key: str) -> ChatMessage | None:
        return await self._async(lambda: self._delete_at(key, -1))

    def get_keys(self) -> list[str]:
        return self._sync(self._keys)

    async def aget_keys(self) -> list[str]:
        return await self._async(self._keys)


__all__ = ["AalisChatStore", "ClearFailed"]
