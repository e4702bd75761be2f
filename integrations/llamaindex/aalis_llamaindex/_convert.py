"""LlamaIndex chat messages <-> Aalis messages, both ways without loss.

The same two rules as the LangChain adapter (docs/integrations/llamaindex.md):

* a LlamaIndex message is stored as the Aalis message a model needs (role, text, tool calls
  from ``additional_kwargs["tool_calls"]``, ``tool_call_id``, name), plus its whole
  ``model_dump`` under ``metadata["llamaindex"]``; a message made of one text block keeps
  its text only in ``content``, so a rewrite on the Aalis side shows in LlamaIndex;
* an Aalis message saved by anyone else becomes the LlamaIndex message for its role, with
  the fields LlamaIndex has no place for under ``additional_kwargs["aalis"]``, which saving
  it again restores.
"""

from __future__ import annotations

import json
from typing import Any

from aalis_schema_message import Message, ToolCall
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

#: Metadata key holding the LlamaIndex form of a message saved through the adapter.
LLAMAINDEX_KEY = "llamaindex"
#: ``additional_kwargs`` key holding the Aalis fields LlamaIndex has no place for.
AALIS_KEY = "aalis"

_ROLES = {role.value for role in MessageRole}


def _single_text(message: ChatMessage) -> bool:
    return len(message.blocks) == 1 and isinstance(message.blocks[0], TextBlock)


def _tool_calls(extra: dict[str, Any]) -> tuple[ToolCall, ...] | None:
    """OpenAI-shaped ``additional_kwargs["tool_calls"]`` as Aalis tool calls."""
    raw = extra.get("tool_calls")
    if not isinstance(raw, list) or not raw:
        return None
    calls: list[ToolCall] = []
    for index, item in enumerate(raw):
        if hasattr(item, "model_dump"):
            item = item.model_dump()
        if not isinstance(item, dict):
            continue
        nested = item.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else item
        name = function.get("name")
        arguments = function.get("arguments", function.get("args", "{}"))
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(name, str) and name:
            calls.append(
                ToolCall(
                    id=str(item.get("id") or f"call_{index}"),
                    name=name,
                    arguments=arguments or "{}",
                )
            )
    return tuple(calls) or None


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def to_aalis(message: ChatMessage, *, platform: str | None = None) -> Message:
    """The Aalis message to store for ``message``."""
    if not isinstance(message, ChatMessage):
        raise TypeError(f"expected a LlamaIndex ChatMessage, got {type(message).__name__}")
    text = message.content
    extra = dict(message.additional_kwargs)
    carried = extra.get(AALIS_KEY)
    if isinstance(carried, dict):
        keep_none = carried.get("content", "") is None and not text
        try:
            base = Message.from_json({**carried, "content": None if keep_none else text})
        except (TypeError, ValueError):
            base = None
        if base is not None and from_aalis(base) == message:
            return base
    form = message.model_dump(mode="json")
    if _single_text(message):
        del form["blocks"]
    metadata: dict[str, Any] = {}
    if isinstance(carried, dict) and isinstance(carried.get("metadata"), dict):
        metadata.update(carried["metadata"])
    if platform is not None:
        metadata.setdefault("platform", platform)
    metadata[LLAMAINDEX_KEY] = json.loads(json.dumps(form))
    kind = carried.get("kind") if isinstance(carried, dict) else None
    timestamp = carried.get("timestamp") if isinstance(carried, dict) else None
    return Message(
        role=message.role.value,
        content=text,
        tool_calls=_tool_calls(extra),
        tool_call_id=_optional_str(extra.get("tool_call_id")),
        name=_optional_str(extra.get("name")),
        kind=kind if isinstance(kind, str) else None,
        timestamp=timestamp if isinstance(timestamp, int) else None,
        reasoning_content=_optional_str(extra.get("reasoning_content")),
        metadata=metadata,
    )


def from_aalis(message: Message) -> ChatMessage:
    """The LlamaIndex message for a stored Aalis message."""
    form = (message.metadata or {}).get(LLAMAINDEX_KEY)
    if isinstance(form, dict):
        data = dict(form)
        if "blocks" not in data:
            data["blocks"] = [{"block_type": "text", "text": message.content or ""}]
        try:
            return ChatMessage.model_validate(data)
        except ValueError:
            pass
    carried = message.to_json()
    if carried.pop("content", None) is None:
        carried["content"] = None
    extra: dict[str, Any] = {AALIS_KEY: carried}
    if message.tool_calls:
        extra["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        extra["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        extra["name"] = message.name
    if message.reasoning_content is not None:
        extra["reasoning_content"] = message.reasoning_content
    role = MessageRole(message.role) if message.role in _ROLES else MessageRole.SYSTEM
    return ChatMessage(role=role, content=message.content or "", additional_kwargs=extra)


__all__ = ["AALIS_KEY", "LLAMAINDEX_KEY", "from_aalis", "to_aalis"]
