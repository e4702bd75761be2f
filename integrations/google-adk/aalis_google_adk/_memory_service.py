"""``AalisMemoryService``: ADK's ``BaseMemoryService`` over Aalis semantic recall.

ADK's memory is "what this user said in other sessions". Aalis already indexes every saved
message (memory-vector, on ``memory_messages_saved``) and keeps recall private by default:
under ``cross_session_mode = "user"`` a recall from one of the user's sessions reaches
every session of the same person and no one else's. So ``search_memory`` is a ``recall``
from the user's most recent session, and ``add_session_to_memory`` only has to copy
sessions that another session service kept (docs/integrations/google-adk.md).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from aalis_agent import host_and_bridge, save_conversation
from aalis_api_memory import MemoryService, memory as memory_capability
from aalis_api_vectorstore import recall as recall_capability
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from aalis_google_adk._sessions import aalis_session_id, event_to_message

T = TypeVar("T")


class AalisMemoryService(BaseMemoryService):
    """``search_memory`` through the host's ``recall`` capability, scoped to the user.

    ``k`` bounds the memories returned. Without a recall provider (memory-vector not
    installed or not active) a search returns no memories rather than failing the run.
    """

    def __init__(self, host: Any, *, memory: Any = None, k: int = 5) -> None:
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)
        self.k = k

    @property
    def _store(self) -> MemoryService:
        return cast("MemoryService", self._memory.use)

    async def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    async def add_session_to_memory(self, session: Session) -> None:
        """Copy the session's events into Aalis unless they are there already (a session
        kept by ``AalisSessionService`` is indexed as it is written)."""
        sid = aalis_session_id(session.app_name, session.user_id, session.id)

        async def add() -> None:
            if await self._store.get_history(sid, 1):
                return
            platform = f"adk:{session.app_name}"
            messages = [
                event_to_message(e, platform=platform, user_id=session.user_id)
                for e in session.events
                if not e.partial
            ]
            await save_conversation(self._store, sid, messages, host=self._host)

        await self._run(add)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        async def search() -> SearchMemoryResponse:
            handle = self._host.capability(recall_capability)
            if not handle.present or not query.strip():
                return SearchMemoryResponse(memories=[])
            mine = [
                (e.data.get("last_update_time") or 0, json.loads(e.key)[1])
                for e in await self._store.list_metadata(f"adk-sessions:{app_name}")
                if json.loads(e.key)[0] == user_id
            ]
            if not mine:
                return SearchMemoryResponse(memories=[])
            anchor = aalis_session_id(app_name, user_id, max(mine)[1])
            hits = await handle.use.recall(anchor, query, k=self.k, platform=f"adk:{app_name}")
            memories = [
                MemoryEntry(
                    content=types.Content(
                        role="user" if h.message.role == "user" else "model",
                        parts=[types.Part(text=h.message.content or "")],
                    ),
                    author="user" if h.message.role == "user" else (h.message.name or "model"),
                    id=h.message.id,
                    timestamp=(
                        datetime.fromtimestamp(h.message.timestamp / 1000, tz=UTC).isoformat()
                        if h.message.timestamp is not None
                        else None
                    ),
                    custom_metadata={"session": h.session_id, "score": h.score},
                )
                for h in hits
            ]
            return SearchMemoryResponse(memories=memories)

        return await self._run(search)


__all__ = ["AalisMemoryService"]
