"""A graph's LangChain messages as Aalis messages, without loss.

The stored form is the one the LangChain adapter writes (docs/integrations/langchain.md), so
one session reads the same from either side: the Aalis message a model needs (role, text,
tool calls, tool call id, name, reasoning) plus the whole ``message_to_dict`` form of the
LangChain message under ``metadata["langchain"]`` (without a plain-text ``content``, which
is kept once, in ``content``), so ``additional_kwargs``, ``response_metadata``, content
blocks and ``usage_metadata`` come back equal. The LangChain id is the Aalis id when Aalis
can keep it; the mirror (``_mirror.py``) decides when it cannot.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from aalis_schema_message import Message, ToolCall
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

#: Metadata key holding the LangChain form of a message (the LangChain adapter's too).
LANGCHAIN_KEY = "langchain"
#: ``metadata["platform"]`` of every mirrored message (compression profiles key on it).
PLATFORM = "langgraph"

_ROLE_OF_TYPE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _text_of(content: Any) -> str | None:
    """The plain text of LangChain content (a string, or a list of blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts)


def _role(message: BaseMessage) -> str:
    if isinstance(message, ChatMessage):
        return str(message.role)
    if isinstance(message, FunctionMessage):
        return "function"
    return _ROLE_OF_TYPE.get(message.type, message.type)


def _tool_calls(message: BaseMessage) -> tuple[ToolCall, ...] | None:
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return None
    return tuple(
        ToolCall(
            id=call.get("id") or f"call_{index}",
            name=call["name"],
            arguments=json.dumps(call.get("args", {}), ensure_ascii=False),
        )
        for index, call in enumerate(message.tool_calls)
    )


def usable_id(value: object) -> str | None:
    """A LangChain id Aalis can keep as ``Message.id``, or None."""
    if not isinstance(value, str):
        return None
    if not value or len(value) > 128 or not value.isprintable() or value != value.strip():
        return None
    return value


def digest(message: BaseMessage) -> str:
    """A short fingerprint of everything in ``message``, stable across versions: part of
    the key of a message without an id (``_mirror._keys``), and how records written
    before ``fingerprint`` tell a changed message."""
    form = json.dumps(message_to_dict(message), sort_keys=True, default=str)
    return hashlib.sha256(form.encode("utf-8")).hexdigest()[:20]


def fingerprint(message: BaseMessage) -> str:
    """What the mirror compares at every checkpoint to see a message the graph replaced
    under the same id (``add_messages`` does that): pydantic's own JSON of the message,
    hashed, about 3x cheaper than ``digest`` (every message of the thread is fingerprinted
    at every checkpoint that changed the channel). A message pydantic cannot dump (bytes
    in ``additional_kwargs``) falls back to ``digest``."""
    try:
        form = message.model_dump_json()
    except ValueError:  # pydantic's serialization error is a ValueError
        return "d:" + digest(message)
    return hashlib.sha256(form.encode("utf-8")).hexdigest()[:20]


def to_aalis(message: BaseMessage, platform: str = PLATFORM) -> Message:
    """The Aalis message to store for ``message`` (no id, no timestamp: the mirror sets
    them; ``platform`` is its ``metadata["platform"]``). Raises ``TypeError`` for what is
    not JSON (a message must be storable whole)."""
    form = message_to_dict(message)
    data = dict(form["data"])
    if isinstance(message.content, str):
        del data["content"]
    data.pop("id", None)  # lives in Message.id, and the mirror's record
    metadata: dict[str, Any] = {
        "platform": platform,
        LANGCHAIN_KEY: json.loads(json.dumps({"type": form["type"], "data": data})),
    }
    text = _text_of(message.content)
    reasoning = message.additional_kwargs.get("reasoning_content")
    return Message(
        role=_role(message),
        content=text if text is not None or not isinstance(message, AIMessage) else None,
        tool_calls=_tool_calls(message),
        tool_call_id=message.tool_call_id if isinstance(message, ToolMessage) else None,
        name=message.name,
        reasoning_content=reasoning if isinstance(reasoning, str) else None,
        metadata=metadata,
    )


def from_aalis(message: Message, langchain_id: str | None = None) -> BaseMessage | None:
    """The LangChain message a mirrored Aalis message was made from (None when it holds
    no LangChain form: it was saved by someone else). ``langchain_id`` is the graph's id
    when it differs from the Aalis one."""
    form = (message.metadata or {}).get(LANGCHAIN_KEY)
    if not isinstance(form, dict):
        return None
    kind, data = form.get("type"), form.get("data")
    if not isinstance(kind, str) or not isinstance(data, dict):
        return None
    data = dict(data)
    if "content" not in data:
        data["content"] = message.content if message.content is not None else ""
    data["id"] = langchain_id if langchain_id is not None else message.id
    try:
        return messages_from_dict([{"type": kind, "data": data}])[0]
    except (TypeError, ValueError, KeyError):
        return None


__all__: list[str] = []
