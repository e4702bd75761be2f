"""``AalisHistory``: a Pydantic AI run's messages in any Aalis memory provider.

Pydantic AI keeps no history itself: an app passes ``message_history=`` to ``agent.run`` and
stores ``result.new_messages()`` somewhere. ``AalisHistory`` is that somewhere — ``load()``
and ``save()`` — plus ``processor``, a history processor (``ProcessHistory``) that puts the
summary of compressed turns and the recall block in front of what the model sees
(docs/integrations/pydantic-ai.md).

Each ``ModelMessage`` is one Aalis message, kept verbatim in ``metadata["pydantic_ai"]``
(Pydantic AI's own JSON form, ``ModelMessagesTypeAdapter``), so every part type, id, usage
and timestamp comes back; the Aalis fields are filled so ``aalis history``, recall and the
summariser see an ordinary conversation.

With a person (``user_id``), the processor saves the run's new prompt before it asks for
recall, as ``aalis chat``'s turn does, so even the first run of a new session is the
person's and recalls their other sessions; ``save()`` then skips that request. ``save()``
reports the model's usage (``token_usage``), which lets memory-summary compress by itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from aalis_agent import (
    SUMMARY_HEADER,
    PromptRequest,
    check_context_window,
    collect_prompt_blocks,
    host_and_bridge,
    report_usage,
    run_clear,
    save_conversation,
)
from aalis_api_memory import (
    ClearResult,
    MemoryService,
    Person,
    compression,
    memory as memory_capability,
)
from aalis_schema_message import Message, ToolCall
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from aalis_pydantic_ai._usage import tokens_of

T = TypeVar("T")

#: Where the verbatim message lives in ``Message.metadata``.
MESSAGE_KEY = "pydantic_ai"


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        texts = [v for v in value if isinstance(v, str)]
        return "\n".join(texts) if texts else None
    return None


def to_aalis(message: ModelMessage, *, platform: str | None = None) -> Message:
    """One Pydantic AI message as the Aalis message that stores it."""
    dumped = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    metadata: dict[str, Any] = {MESSAGE_KEY: dumped}
    if platform is not None:
        metadata["platform"] = platform
    if isinstance(message, ModelResponse):
        texts = [p.content for p in message.parts if isinstance(p, TextPart)]
        thoughts = [p.content for p in message.parts if isinstance(p, ThinkingPart)]
        calls = tuple(
            ToolCall(id=p.tool_call_id, name=p.tool_name, arguments=p.args_as_json_str())
            for p in message.parts
            if isinstance(p, ToolCallPart)
        )
        return Message(
            role="assistant",
            content="\n".join(texts) if texts else None,
            tool_calls=calls or None,
            reasoning_content="\n".join(thoughts) if thoughts else None,
            metadata=metadata,
        )
    users = [p for p in message.parts if isinstance(p, UserPromptPart)]
    returns = [p for p in message.parts if isinstance(p, ToolReturnPart)]
    systems = [p for p in message.parts if isinstance(p, SystemPromptPart)]
    if users:
        texts = [t for p in users if (t := _text(p.content))]
        return Message(role="user", content="\n".join(texts) or None, metadata=metadata)
    if returns:
        return Message(
            role="tool",
            content="\n".join(p.model_response_str() for p in returns),
            tool_call_id=returns[0].tool_call_id,
            name=returns[0].tool_name,
            metadata=metadata,
        )
    if systems:
        return Message(
            role="system", content="\n".join(p.content for p in systems), metadata=metadata
        )
    return Message(role="user", kind="pydantic-ai-request", content=None, metadata=metadata)


def from_aalis(message: Message) -> ModelMessage | None:
    """The Pydantic AI message a stored message stands for (None: not for a model)."""
    if message.is_control or (message.metadata or {}).get("prompt_contribution") is not None:
        return None
    stored = (message.metadata or {}).get(MESSAGE_KEY)
    if isinstance(stored, dict):
        return ModelMessagesTypeAdapter.validate_python([stored])[0]
    text = message.content
    if message.role == "user" and text:
        return ModelRequest(parts=[UserPromptPart(content=text)])
    if message.role == "system" and text:
        return ModelRequest(parts=[SystemPromptPart(content=text)])
    if message.role == "tool":
        return ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name=message.name or "tool",
                    content=text or "",
                    tool_call_id=message.tool_call_id or "",
                )
            ]
        )
    if message.role == "assistant":
        parts: list[Any] = [TextPart(content=text)] if text else []
        parts += [
            ToolCallPart(tool_name=c.name, args=c.arguments, tool_call_id=c.id)
            for c in message.tool_calls or ()
        ]
        return ModelResponse(parts=parts) if parts else None
    return None


class AalisHistory:
    """The messages of one Aalis session, as Pydantic AI's ``message_history``.

    ``host`` is a started ``aalis_core.Host`` (async methods) or ``SyncHost`` (both);
    ``platform`` and ``user_id`` name the person stamped on user messages (recall's scope,
    ``aalis forget``). ``context_window`` is the model's window in tokens: with it, the
    usage ``save()`` finds on the responses reaches memory-summary's token line; without
    it, only its count line compresses a long session by itself.
    """

    def __init__(
        self,
        session_id: str,
        host: Any,
        *,
        memory: Any = None,
        platform: str | None = "pydantic-ai",
        user_id: str | None = None,
        context_window: int | None = None,
    ) -> None:
        self.context_window = check_context_window(context_window)
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"the session id must be a non-empty string, got {session_id!r}")
        if user_id is not None and platform is None:
            raise ValueError("a user_id needs a platform: the person is (platform, user_id)")
        self.session_id = session_id
        self.platform = platform
        self.person = Person(platform, user_id) if user_id is not None and platform else None
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)
        # Requests the processor saved ahead of ``save()`` (by ``_request_key``), skipped there.
        self._presaved: set[str] = set()

    @property
    def _store(self) -> MemoryService:
        return cast("MemoryService", self._memory.use)

    async def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    # -- load and save ----------------------------------------------------------------------

    async def load(self, limit: float = math.inf) -> list[ModelMessage]:
        """The session's active messages, oldest first (``limit``: the newest N)."""

        async def read() -> list[ModelMessage]:
            stored = await self._store.get_history(self.session_id, limit)
            return [m for s in stored if (m := from_aalis(s)) is not None]

        return await self._run(read)

    async def save(self, messages: Sequence[ModelMessage]) -> None:
        """Append ``messages`` (usually ``result.new_messages()``) and announce them; a
        request the processor saved already is skipped. Then report the newest response's
        usage, so memory-summary can compress the session by itself."""
        kept = [m for m in messages if not self._take_presaved(m)]
        converted = self._convert(kept)
        used = tokens_of(messages)

        async def write() -> None:
            if converted:
                await save_conversation(self._store, self.session_id, converted, host=self._host)
            await report_usage(
                self._host,
                self._store,
                self.session_id,
                self.platform,
                used=used,
                context_window=self.context_window,
            )

        await self._run(write)

    def _convert(self, messages: Sequence[ModelMessage]) -> list[Message]:
        converted = [to_aalis(m, platform=self.platform) for m in messages]
        if self.person is None:
            return converted
        return [self.person.stamp(m, overwrite=False) if m.role == "user" else m for m in converted]

    def _take_presaved(self, message: ModelMessage) -> bool:
        key = _request_key(message)
        if key is None or key not in self._presaved:
            return False
        self._presaved.discard(key)
        return True

    async def clear(self) -> list[ClearResult]:
        """Clear the session through the clear chain (history, summary, vectors...)."""

        async def clear() -> list[ClearResult]:
            return await run_clear(
                self._host, "session", session_id=self.session_id, memory=self._memory
            )

        return await self._run(clear)

    def load_sync(self, limit: float = math.inf) -> list[ModelMessage]:
        return self._bridge.call_sync(lambda: self.load(limit))

    def save_sync(self, messages: Sequence[ModelMessage]) -> None:
        self._bridge.call_sync(lambda: self.save(messages))

    # -- the history processor --------------------------------------------------------------

    async def processor(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """For ``capabilities=[ProcessHistory(history.processor)]``: the summary and the
        recall block, as one system request in front of ``messages``. Not saved: a
        processor changes what the model sees, not the run's new messages."""
        query, prompt = "", None
        for message in reversed(messages):
            if isinstance(message, ModelRequest):
                texts = [
                    t
                    for p in message.parts
                    if isinstance(p, UserPromptPart) and (t := _text(p.content))
                ]
                if texts:
                    query, prompt = texts[-1], message
                    break
        shown = [
            Message(role=m.role, content=m.content)
            for m in self._convert(messages)
            if m.role in ("user", "assistant") and m.content
        ]

        async def head() -> list[str]:
            if prompt is not None and prompt is messages[-1]:
                await self._presave(prompt)
            out: list[str] = []
            summary = await self._summary()
            if summary:
                out.append(SUMMARY_HEADER + summary)
            out.extend(await self._blocks(query, shown))
            return out

        blocks = await self._run(head)
        if not blocks:
            return messages
        front = ModelRequest(parts=[SystemPromptPart(content=b) for b in blocks])
        return [front, *messages]

    async def _presave(self, prompt: ModelRequest) -> None:
        """Save the run's new prompt now, when a person speaks: recall's ``user`` scope knows
        a session's person from its stored messages, so the first run of a new session would
        otherwise recall only itself. Each prompt is saved once (a run with tool calls calls
        the processor again with the same prompt first)."""
        key = _request_key(prompt)
        if self.person is None or key is None or key in self._presaved:
            return
        newest = await self._store.get_history(self.session_id, 1)
        if any(_stored_key(m) == key for m in newest):
            return  # loaded from this session (a run resumed from stored history)
        await save_conversation(
            self._store, self.session_id, self._convert([prompt]), host=self._host
        )
        self._presaved.add(key)

    async def _summary(self) -> str | None:
        handle = self._host.capability(compression)
        if not handle.present:
            return None
        try:
            record = await handle.use.summary(self.session_id)
        except Exception:
            return None
        return record.text if record is not None else None

    async def _blocks(self, query: str, shown: list[Message]) -> list[str]:
        if not query:
            return []
        try:
            self._host.hook_impls("prompt_contributions")
        except ValueError:
            return []
        request = PromptRequest(
            session_id=self.session_id, query=query, platform=self.platform, history=shown
        )
        try:
            blocks = await collect_prompt_blocks(self._host, request)
        except Exception:
            return []
        return [b.content for b in blocks]


def _request_key(message: ModelMessage) -> str | None:
    """What tells a user's request apart: its parts as Pydantic AI dumps them (the prompt's
    text and its timestamp). None for anything else."""
    if not isinstance(message, ModelRequest):
        return None
    if not any(isinstance(p, UserPromptPart) for p in message.parts):
        return None
    dumped = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    return json.dumps(dumped.get("parts"), sort_keys=True, default=str)


def _stored_key(message: Message) -> str | None:
    """``_request_key`` of a stored message, from its verbatim copy."""
    stored = (message.metadata or {}).get(MESSAGE_KEY)
    if not isinstance(stored, dict) or stored.get("kind") != "request":
        return None
    return json.dumps(stored.get("parts"), sort_keys=True, default=str)


__all__ = ["MESSAGE_KEY", "AalisHistory", "from_aalis", "to_aalis"]
