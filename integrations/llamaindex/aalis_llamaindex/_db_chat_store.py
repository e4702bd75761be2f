"""``AalisDBChatStore``: LlamaIndex's ``AsyncDBChatStore`` (what ``Memory`` talks to) over
any Aalis memory provider.

LlamaIndex's current ``Memory`` keeps a FIFO of ACTIVE messages and, when they outgrow the
token budget, *archives* the oldest (``archive_oldest_messages``) and hands them to its memory
blocks. Aalis has the same two states: ACTIVE is the active history, ARCHIVED is the archive
compression writes to. So ``Memory.from_defaults(chat_store=AalisDBChatStore(host))``
archives into Aalis, and ``aalis history --full``, recall (which reads archived turns too),
export and ``aalis serve`` see both (docs/integrations/llamaindex.md).

After a model's reply is added, the store tells the compression provider how long the
session is (``token_usage`` with the message count), so memory-summary's count line
compresses a long session by itself; ``AalisRecallBlock`` then puts the summary in front.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from aalis_agent import LoopBridge, host_and_bridge, report_usage, run_clear, save_conversation
from aalis_api_memory import (
    FullHistory,
    MemoryService,
    MessagesById,
    Person,
    Transfer,
    memory as memory_capability,
    supports,
)
from aalis_schema_message import Message
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
from pydantic import PrivateAttr

from aalis_llamaindex._convert import from_aalis, to_aalis

T = TypeVar("T")


def _key(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"the key (an Aalis session id) must be a non-empty string, got {value!r}")
    return value


def _window(messages: list[T], limit: int | None, offset: int | None) -> list[T]:
    start = max(offset or 0, 0)
    return messages[start:] if limit is None else messages[start : start + max(limit, 0)]


class AalisDBChatStore(AsyncDBChatStore):
    """An ``AsyncDBChatStore`` on an Aalis host; a key is a session id.

    ``host`` is a started ``aalis_core.Host`` or ``SyncHost`` (``Memory``'s sync methods run
    the async ones on their own loop; a ``SyncHost`` serves any loop). ``platform`` and
    ``user_id`` name the person stamped on user messages (recall's scope, ``aalis forget``).
    """

    platform: str | None = "llamaindex"
    user_id: str | None = None
    _host: Any = PrivateAttr()
    _bridge: LoopBridge = PrivateAttr()
    _memory: Any = PrivateAttr()

    def __init__(self, host: Any, *, memory: Any = None, **data: Any) -> None:
        super().__init__(**data)
        if self.user_id is not None and self.platform is None:
            raise ValueError("a user_id needs a platform: the person is (platform, user_id)")
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)

    @classmethod
    def class_name(cls) -> str:
        return "AalisDBChatStore"

    @property
    def _store(self) -> MemoryService:
        return cast("MemoryService", self._memory.use)

    async def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    # -- reading ----------------------------------------------------------------------------

    async def _records(self, key: str, status: MessageStatus | None) -> list[Message]:
        """The session's conversation messages with ``status`` (None: both), in order."""
        if status == MessageStatus.ACTIVE:
            stored = await self._store.get_history(key, math.inf)
            return [m for m in stored if not m.is_control]
        store = self._store
        if not supports(store, Transfer, "export_session"):
            raise NotImplementedError("this memory provider cannot read its archive")
        records = await store.export_session(key)
        return [
            r.message
            for r in records
            if not r.message.is_control and (status is None or r.archived)
        ]

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        async def read() -> list[ChatMessage]:
            found = await self._records(_key(key), status)
            return [from_aalis(m) for m in _window(found, limit, offset)]

        return await self._run(read)

    async def count_messages(
        self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE
    ) -> int:
        async def count() -> int:
            store = self._store
            if status == MessageStatus.ACTIVE and supports(store, FullHistory, "count_history"):
                return int(await store.count_history(_key(key)))
            return len(await self._records(_key(key), status))

        return await self._run(count)

    async def get_keys(self) -> list[str]:
        async def keys() -> list[str]:
            store = self._store
            if not supports(store, Transfer, "list_sessions"):
                raise NotImplementedError("this memory provider cannot list sessions")
            return [info.session_id for info in await store.list_sessions()]

        return await self._run(keys)

    # -- writing ----------------------------------------------------------------------------

    def _convert(self, messages: Sequence[ChatMessage]) -> list[Message]:
        converted = [to_aalis(m, platform=self.platform) for m in messages]
        if self.user_id is None or self.platform is None:
            return converted
        person = Person(self.platform, self.user_id)
        return [person.stamp(m, overwrite=False) if m.role == "user" else m for m in converted]

    async def add_message(
        self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        await self.add_messages(key, [message], status)

    async def add_messages(
        self,
        key: str,
        messages: list[ChatMessage],
        status: MessageStatus = MessageStatus.ACTIVE,
    ) -> None:
        if status != MessageStatus.ACTIVE:
            raise ValueError(
                "only ACTIVE messages can be added: the archive holds what was active "
                "(archive_oldest_messages moves them there)"
            )
        converted = self._convert(messages)  # refuse bad input before anything is written

        async def write() -> None:
            await save_conversation(self._store, _key(key), converted, host=self._host)
            if any(m.role == "assistant" for m in converted):  # after a model call
                await report_usage(
                    self._host,
                    self._store,
                    key,
                    self.platform,
                    used=None,
                    context_window=None,
                )

        await self._run(write)

    async def set_messages(
        self,
        key: str,
        messages: list[ChatMessage],
        status: MessageStatus = MessageStatus.ACTIVE,
    ) -> None:
        if status != MessageStatus.ACTIVE:
            raise ValueError("only the ACTIVE messages can be replaced")
        converted = self._convert(messages)

        async def replace() -> None:
            await self._delete(_key(key), await self._records(key, MessageStatus.ACTIVE))
            await save_conversation(self._store, key, converted, host=self._host)

        await self._run(replace)

    async def _delete(self, key: str, doomed: Sequence[Message]) -> None:
        """Delete these stored messages by id and announce it, so derived layers follow."""
        if not doomed:
            return
        store = self._store
        if not supports(store, MessagesById, "delete_messages_by_ids"):
            raise NotImplementedError("this memory provider cannot delete messages by id")
        ids = [m.id for m in doomed if m.id is not None]
        await store.delete_messages_by_ids(key, ids)
        stamps = sorted({m.timestamp for m in doomed if m.timestamp is not None})
        await self._host.emit("memory_messages_deleted", session_id=key, timestamps=stamps, ids=ids)
        await self._host.emit("history_changed", session_id=key)

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Delete the message at position ``idx`` of the session's whole history (archived
        and active, oldest first; Aalis ids are strings, so the position stands in for
        SQLAlchemyChatStore's integer row id)."""
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError(f"idx must be an int, got {type(idx).__name__}")

        async def delete() -> ChatMessage | None:
            found = await self._records(_key(key), None)
            if not 0 <= idx < len(found):
                return None
            await self._delete(key, [found[idx]])
            return from_aalis(found[idx])

        return await self._run(delete)

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        """``None``: the clear chain (history, summary, vectors of the session); a status:
        only those messages, by id."""

        async def delete() -> None:
            if status is None:
                await run_clear(self._host, "session", session_id=_key(key), memory=self._memory)
            else:
                await self._delete(_key(key), await self._records(key, status))

        await self._run(delete)

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        async def delete() -> list[ChatMessage]:
            oldest = (await self._records(_key(key), MessageStatus.ACTIVE))[: max(n, 0)]
            await self._delete(key, oldest)
            return [from_aalis(m) for m in oldest]

        return await self._run(delete)

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Archive the oldest ``n`` active conversation messages (``archive_span``; markers
        in between go with them) and return them."""

        async def archive() -> list[ChatMessage]:
            stored = await self._store.get_history(_key(key), math.inf)
            conversation = [i for i, m in enumerate(stored) if not m.is_control]
            if n <= 0 or not conversation:
                return []
            taken = conversation[: min(n, len(conversation))]
            await self._store.archive_span(key, taken[-1] + 1)
            await self._host.emit("history_changed", session_id=key)
            return [from_aalis(stored[i]) for i in taken]

        return await self._run(archive)


__all__ = ["AalisDBChatStore"]
