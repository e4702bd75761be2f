"""``AalisSessionService``: Google ADK's ``BaseSessionService`` over any Aalis memory provider.

An ADK app passes ``session_service=AalisSessionService(host)`` to its ``Runner`` instead
of ``DatabaseSessionService`` and gains what the store behind Aalis offers (the backend of
``aalis.toml``, ``aalis history``, ``aalis serve``, export and migrate, clears every plugin
takes part in; docs/integrations/google-adk.md).

Events are messages of the Aalis session ``<app>:<user>:<session id>``, each kept verbatim
in ``metadata["adk_event"]`` (ADK's own JSON form) with the Aalis fields filled (text,
function calls as tool calls, function responses as tool messages). State lives in the
metadata store: the session's in ``adk-sessions:<app>`` (with its times), ``app:`` state in
``adk-app-state``, ``user:`` state in ``adk-user-state:<app>``; ``temp:`` state is never
stored, as in ADK's own services.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from aalis_agent import host_and_bridge, run_clear, save_conversation
from aalis_api_memory import Delete, MemoryService, Put, memory as memory_capability
from aalis_schema_message import Message, ToolCall
from google.adk.events.event import Event
from google.adk.sessions import _session_util
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.sessions.state import State

T = TypeVar("T")

#: Where the verbatim event lives in ``Message.metadata``.
EVENT_KEY = "adk_event"
APP_STATE = "adk-app-state"


def aalis_session_id(app_name: str, user_id: str, session_id: str) -> str:
    """The Aalis session that holds an ADK session's events."""
    return f"{app_name}:{user_id}:{session_id}"


def _sessions_namespace(app_name: str) -> str:
    return f"adk-sessions:{app_name}"


def _user_namespace(app_name: str) -> str:
    return f"adk-user-state:{app_name}"


def _key(user_id: str, session_id: str) -> str:
    return json.dumps([user_id, session_id], ensure_ascii=False)


def event_to_message(event: Event, *, platform: str, user_id: str) -> Message:
    """One ADK event as the Aalis message that stores it."""
    dumped = event.model_dump(mode="json", exclude_none=True, by_alias=True)
    metadata: dict[str, Any] = {EVENT_KEY: dumped, "platform": platform}
    parts = list(event.content.parts or []) if event.content is not None else []
    texts: list[str] = [p.text for p in parts if p.text and not p.thought]
    thoughts: list[str] = [p.text for p in parts if p.text and p.thought]
    calls = tuple(
        ToolCall(
            id=f.id or f.name or "call",
            name=f.name or "function",
            arguments=json.dumps(f.args or {}, ensure_ascii=False, default=str),
        )
        for p in parts
        if (f := p.function_call) is not None
    )
    responses = [r for p in parts if (r := p.function_response) is not None]
    if event.author == "user":
        metadata["user_id"] = user_id
        return Message(role="user", content="\n".join(texts) or None, metadata=metadata)
    if responses and not texts and not calls:
        first = responses[0]
        return Message(
            role="tool",
            content=json.dumps(first.response or {}, ensure_ascii=False, default=str),
            tool_call_id=first.id or first.name,
            name=first.name,
            metadata=metadata,
        )
    return Message(
        role="assistant",
        content="\n".join(texts) or None,
        tool_calls=calls or None,
        reasoning_content="\n".join(thoughts) or None,
        name=event.author,
        metadata=metadata,
    )


def message_to_event(message: Message) -> Event | None:
    """The ADK event a stored message stands for (None for messages of other writers that
    are not conversation, and for control markers)."""
    if message.is_control:
        return None
    stored = (message.metadata or {}).get(EVENT_KEY)
    if isinstance(stored, dict):
        return Event.model_validate(stored)
    if message.role not in ("user", "assistant") or not message.content:
        return None
    from google.genai import types

    return Event(
        author="user" if message.role == "user" else (message.name or "assistant"),
        content=types.Content(
            role="user" if message.role == "user" else "model",
            parts=[types.Part(text=message.content)],
        ),
        timestamp=(message.timestamp or 0) / 1000,
    )


class AalisSessionService(BaseSessionService):
    """ADK sessions, their events and their state in the host's memory provider.

    ``host`` is a started ``aalis_core.Host`` on the loop the ADK ``Runner`` uses, or a
    ``SyncHost`` (any loop). The person of a session is ``("adk:<app>", user_id)``: recall's
    ``user`` scope and ``aalis forget --person adk:<app>:<user>`` go by it.
    """

    def __init__(self, host: Any, *, memory: Any = None) -> None:
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)

    @property
    def _store(self) -> MemoryService:
        return cast("MemoryService", self._memory.use)

    async def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    async def _merged(self, session: Session) -> Session:
        app = await self._store.get_metadata(APP_STATE, session.app_name) or {}
        user = await self._store.get_metadata(_user_namespace(session.app_name), session.user_id)
        for key, value in app.items():
            session.state[State.APP_PREFIX + key] = value
        for key, value in (user or {}).items():
            session.state[State.USER_PREFIX + key] = value
        return session

    def _state_ops(
        self,
        app_name: str,
        user_id: str,
        deltas: dict[str, dict[str, Any]],
        app: dict[str, Any] | None,
        user: dict[str, Any] | None,
    ) -> list[Put | Delete]:
        ops: list[Put | Delete] = []
        if deltas["app"]:
            ops.append(Put(APP_STATE, app_name, {**(app or {}), **deltas["app"]}))
        if deltas["user"]:
            ops.append(Put(_user_namespace(app_name), user_id, {**(user or {}), **deltas["user"]}))
        return ops

    # -- BaseSessionService -----------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        from google.adk.errors.already_exists_error import AlreadyExistsError

        async def create() -> Session:
            sid = (session_id or "").strip() or str(uuid.uuid4())
            space, key = _sessions_namespace(app_name), _key(user_id, sid)
            if await self._store.get_metadata(space, key) is not None:
                raise AlreadyExistsError(f"Session with id {sid} already exists.")
            deltas = _session_util.extract_state_delta(state or {})
            now = time.time()
            app = await self._store.get_metadata(APP_STATE, app_name)
            user = await self._store.get_metadata(_user_namespace(app_name), user_id)
            entry = {"state": deltas["session"], "last_update_time": now, "created": now}
            await self._store.commit_metadata(
                [Put(space, key, entry), *self._state_ops(app_name, user_id, deltas, app, user)]
            )
            session = Session(
                app_name=app_name,
                user_id=user_id,
                id=sid,
                state=dict(deltas["session"]),
                last_update_time=now,
            )
            return await self._merged(session)

        return await self._run(create)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        async def get() -> Session | None:
            sid = session_id.strip()
            entry = await self._store.get_metadata(
                _sessions_namespace(app_name), _key(user_id, sid)
            )
            if entry is None:
                return None
            limit: float = math.inf
            if config is not None and config.num_recent_events is not None:
                limit = config.num_recent_events
            stored = await self._store.get_history(aalis_session_id(app_name, user_id, sid), limit)
            events = [e for m in stored if (e := message_to_event(m)) is not None]
            if config is not None and config.after_timestamp is not None:
                events = [e for e in events if e.timestamp >= config.after_timestamp]
            session = Session(
                app_name=app_name,
                user_id=user_id,
                id=sid,
                state=dict(entry.get("state") or {}),
                events=events,
                last_update_time=float(entry.get("last_update_time") or 0.0),
            )
            return await self._merged(session)

        return await self._run(get)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        async def listing() -> ListSessionsResponse:
            found: list[Session] = []
            for entry in await self._store.list_metadata(_sessions_namespace(app_name)):
                uid, sid = json.loads(entry.key)
                if user_id is not None and uid != user_id:
                    continue
                session = Session(
                    app_name=app_name,
                    user_id=uid,
                    id=sid,
                    state=dict(entry.data.get("state") or {}),
                    last_update_time=float(entry.data.get("last_update_time") or 0.0),
                )
                found.append(await self._merged(session))
            found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
            return ListSessionsResponse(sessions=found)

        return await self._run(listing)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session: its events through the clear chain (history, summary,
        vectors), then its state entry."""

        async def delete() -> None:
            sid = session_id.strip()
            await run_clear(
                self._host,
                "session",
                session_id=aalis_session_id(app_name, user_id, sid),
                memory=self._memory,
            )
            await self._store.delete_metadata(_sessions_namespace(app_name), _key(user_id, sid))

        await self._run(delete)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            return dict(await self._store.get_metadata(_user_namespace(app_name), user_id) or {})

        return await self._run(read)

    async def append_event(self, session: Session, event: Event) -> Event:
        from google.adk.errors.session_not_found_error import SessionNotFoundError

        if event.partial:
            return event
        await super().append_event(session=session, event=event)  # temp state, trimming
        session.last_update_time = event.timestamp
        app_name, user_id, sid = session.app_name, session.user_id, session.id

        async def persist() -> None:
            space, key = _sessions_namespace(app_name), _key(user_id, sid)
            entry = await self._store.get_metadata(space, key)
            if entry is None:
                raise SessionNotFoundError(f"Session {sid} not found.")
            message = event_to_message(event, platform=f"adk:{app_name}", user_id=user_id)
            await save_conversation(
                self._store, aalis_session_id(app_name, user_id, sid), [message], host=self._host
            )
            deltas = _session_util.extract_state_delta(
                event.actions.state_delta if event.actions and event.actions.state_delta else {}
            )
            app = await self._store.get_metadata(APP_STATE, app_name)
            user = await self._store.get_metadata(_user_namespace(app_name), user_id)
            updated = {
                **entry,
                "state": {**(entry.get("state") or {}), **deltas["session"]},
                "last_update_time": event.timestamp,
            }
            await self._store.commit_metadata(
                [Put(space, key, updated), *self._state_ops(app_name, user_id, deltas, app, user)]
            )

        await self._run(persist)
        return event


__all__ = [
    "APP_STATE",
    "EVENT_KEY",
    "AalisSessionService",
    "aalis_session_id",
    "event_to_message",
    "message_to_event",
]
