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

An event and its state delta land together or not at all, although the memory contract has
no transaction spanning a message and metadata: ``append_event`` first commits the state
*and the event's message* (as a pending entry of the session) in one metadata batch, then
saves the message, then drops the pending entry. A failure in between leaves a pending
entry that every later read or append finishes first (it saves the message unless its id is
stored already), so no reader ever sees a state without its event or an event twice
(docs/integrations/google-adk.md, "An event and its state together").

A compressed session is replayed with the summary of its archived turns in front, as an
ADK compaction event (``EventActions.compaction``): ADK shows its text to the model in place
of the turns it covers, exactly as it shows its own compactions.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from aalis_agent import (
    SUMMARY_HEADER,
    check_context_window,
    host_and_bridge,
    report_usage,
    run_clear,
    save_conversation,
    stamped,
)
from aalis_api_memory import (
    Delete,
    MemoryService,
    MessageIdConflict,
    Put,
    compression,
    memory as memory_capability,
)
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

from aalis_google_adk._usage import tokens_of

T = TypeVar("T")

#: Where the verbatim event lives in ``Message.metadata``.
EVENT_KEY = "adk_event"
APP_STATE = "adk-app-state"
#: The key of a session entry that holds the messages of events whose state is committed
#: and whose message may not be saved yet (``append_event``'s journal).
PENDING = "pending"
#: The id of the compaction event that carries the summary in front of a replayed session.
SUMMARY_EVENT_ID = "aalis-summary"


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


def summary_event(
    text: str, covered_from: int | None, covered_to: int | None, first: float | None
) -> Event:
    """The summary as an ADK compaction event, covering what compression archived: from its
    first message to just before the first replayed event (``first``, seconds)."""
    from google.adk.events.event_actions import EventActions, EventCompaction
    from google.genai import types

    end = (covered_to or 0) / 1000
    if first is not None:
        end = min(end, first - 1e-6) if covered_to is not None else first - 1e-6
    start = min((covered_from or 0) / 1000, end)
    return Event(
        id=SUMMARY_EVENT_ID,
        invocation_id=SUMMARY_EVENT_ID,
        author="user",
        timestamp=end,
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=start,
                end_timestamp=end,
                compacted_content=types.Content(
                    role="model", parts=[types.Part(text=SUMMARY_HEADER + text)]
                ),
            )
        ),
    )


class AalisSessionService(BaseSessionService):
    """ADK sessions, their events and their state in the host's memory provider.

    ``host`` is a started ``aalis_core.Host`` on the loop the ADK ``Runner`` uses, or a
    ``SyncHost`` (any loop). The person of a session is ``("adk:<app>", user_id)``: recall's
    ``user`` scope and ``aalis forget --person adk:<app>:<user>`` go by it.

    ``context_window`` is the model's window in tokens: with it, the token figures ADK puts
    on the model's events reach memory-summary's token line; without it, only its count line
    compresses a long session by itself.
    """

    def __init__(self, host: Any, *, memory: Any = None, context_window: int | None = None) -> None:
        self.context_window = check_context_window(context_window)
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
            entry = await self._settle(app_name, user_id, sid, entry)
            limit: float = math.inf
            if config is not None and config.num_recent_events is not None:
                limit = config.num_recent_events
            aalis_sid = aalis_session_id(app_name, user_id, sid)
            stored = await self._store.get_history(aalis_sid, limit)
            events = [e for m in stored if (e := message_to_event(m)) is not None]
            if config is not None and config.after_timestamp is not None:
                events = [e for e in events if e.timestamp >= config.after_timestamp]
            else:
                front = await self._summary(aalis_sid, events)
                events = [front, *events] if front is not None else events
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

    async def _summary(self, aalis_sid: str, events: list[Event]) -> Event | None:
        """The summary of what compression archived, as the event in front (None when the
        session has none, or no compression provider is active). A replay never fails for
        a summary."""
        handle = self._host.capability(compression)
        if not handle.present:
            return None
        try:
            record = await handle.use.summary(aalis_sid)
        except Exception:
            return None
        if record is None or not record.text:
            return None
        first = events[0].timestamp if events else None
        return summary_event(record.text, record.covered_from, record.covered_to, first)

    async def _settle(
        self, app_name: str, user_id: str, sid: str, entry: dict[str, Any]
    ) -> dict[str, Any]:
        """Finish an append that failed after its state was committed: save the pending
        messages (a message whose id is stored already was saved before the failure), then
        drop them from the entry. Returns the entry as it now is."""
        pending = entry.get(PENDING)
        if not pending:
            return entry
        aalis_sid = aalis_session_id(app_name, user_id, sid)
        for data in pending:
            message = Message.from_json(data)
            # A message whose id is stored was saved before the failure: only the pending
            # entry outlived it.
            with contextlib.suppress(MessageIdConflict):
                await save_conversation(self._store, aalis_sid, [message], host=self._host)
        settled = {k: v for k, v in entry.items() if k != PENDING}
        await self._store.commit_metadata(
            [Put(_sessions_namespace(app_name), _key(user_id, sid), settled)]
        )
        return settled

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store the event and its state delta, together or not at all (the journal in the
        module's docstring); then tell memory-summary how full the session is."""
        from google.adk.errors.session_not_found_error import SessionNotFoundError

        if event.partial:
            return event
        await super().append_event(session=session, event=event)  # temp state, trimming
        session.last_update_time = event.timestamp
        app_name, user_id, sid = session.app_name, session.user_id, session.id
        aalis_sid = aalis_session_id(app_name, user_id, sid)
        platform = f"adk:{app_name}"

        async def persist() -> None:
            space, key = _sessions_namespace(app_name), _key(user_id, sid)
            entry = await self._store.get_metadata(space, key)
            if entry is None:
                raise SessionNotFoundError(f"Session {sid} not found.")
            entry = await self._settle(app_name, user_id, sid, entry)
            # The message's id and timestamp are fixed now, so finishing it later (after a
            # failure) saves exactly this message, at its place in the session.
            message = stamped(
                event_to_message(event, platform=platform, user_id=user_id), aalis_sid
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
            journal = {**updated, PENDING: [message.to_json()]}
            # 1. the state and the pending message, in one batch: all or nothing
            await self._store.commit_metadata(
                [Put(space, key, journal), *self._state_ops(app_name, user_id, deltas, app, user)]
            )
            # 2. the message; 3. the pending entry goes. A failure before 3 is finished by
            # the next read or append (``_settle``); a reader of another process that
            # finished it first has stored the message under its id already.
            with contextlib.suppress(MessageIdConflict):
                await save_conversation(self._store, aalis_sid, [message], host=self._host)
            await self._store.commit_metadata([Put(space, key, updated)])
            if event.author != "user":
                await report_usage(
                    self._host,
                    self._store,
                    aalis_sid,
                    platform,
                    used=tokens_of(event),
                    context_window=self.context_window,
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
