"""LangChain messages <-> Aalis messages, both ways without loss.

Both directions must survive a round trip, because one store now serves two worlds: a
LangChain app reads what ``aalis chat`` saved and the other way round.

* A LangChain message is stored as the Aalis message a model needs (role, text, tool calls,
  tool call id, name, reasoning), plus its whole ``message_to_dict`` form under
  ``metadata["langchain"]`` (without a plain-text ``content``, which lives in ``content``
  once, so that a rewrite of the text through ``update_message_content`` shows on both
  sides). Reading it back gives an equal LangChain message: id, ``additional_kwargs``,
  ``response_metadata``, content blocks, ``usage_metadata`` and all.
* An Aalis message saved by anyone else becomes the natural LangChain message for its role,
  with whatever LangChain has no field for (timestamp, kind, metadata, segments...) under
  ``additional_kwargs["aalis"]``; saving that LangChain message again restores those fields,
  so the Aalis message comes back equal.
* Ids map both ways: a LangChain message's ``id`` is the Aalis ``Message.id`` it is saved
  under (an id Aalis cannot take, too long or blank-padded, is left to the store, which
  names the message itself), and a stored message is read back with its Aalis id as its
  LangChain ``id`` (docs/reference/memory-contract.md, "Message identity"). A LangChain
  message read from the store and added again is the same message: the store refuses it
  (``MessageIdConflict``) rather than keeping it twice.
"""

from __future__ import annotations

import json
from typing import Any

from aalis_schema_message import Message, ToolCall
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

#: Metadata key holding the LangChain form of a message saved through the adapter.
LANGCHAIN_KEY = "langchain"
#: ``additional_kwargs`` key holding the Aalis fields LangChain has no place for.
AALIS_KEY = "aalis"

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
    calls = []
    for index, call in enumerate(message.tool_calls):
        calls.append(
            ToolCall(
                id=call.get("id") or f"call_{index}",
                name=call["name"],
                arguments=json.dumps(call.get("args", {}), ensure_ascii=False),
            )
        )
    return tuple(calls)


def _usable_id(value: object) -> str | None:
    """A LangChain id Aalis can keep as ``Message.id``, or None (the store names it then)."""
    if not isinstance(value, str):
        return None
    if not value or len(value) > 128 or not value.isprintable() or value != value.strip():
        return None
    return value


def _aalis_fields(message: BaseMessage) -> dict[str, Any] | None:
    extra = message.additional_kwargs.get(AALIS_KEY)
    return dict(extra) if isinstance(extra, dict) else None


def to_aalis(message: BaseMessage, *, platform: str | None = None) -> Message:
    """The Aalis message to store for ``message``.

    ``platform`` fills ``metadata["platform"]`` (compression profiles and cross-session
    filters key on it) unless the message already carries one.
    """
    if not isinstance(message, BaseMessage):
        raise TypeError(f"expected a LangChain BaseMessage, got {type(message).__name__}")
    text = _text_of(message.content)
    carried = _aalis_fields(message)
    if carried is not None:
        # A message that came from Aalis: rebuild it, and keep it as is when LangChain reads
        # it back unchanged (the round trip Aalis -> LangChain -> Aalis).
        keep_none = "content" in carried and carried["content"] is None and text == ""
        try:
            base = Message.from_json({**carried, "content": None if keep_none else text})
            ident = _usable_id(message.id)
            if ident is not None:
                base = base.with_id(ident)
        except (TypeError, ValueError):
            base = None
        if base is not None and from_aalis(base) == message:
            return base
    form = message_to_dict(message)
    data = dict(form["data"])
    if isinstance(message.content, str):
        del data["content"]
    metadata: dict[str, Any] = {}
    if carried is not None and isinstance(carried.get("metadata"), dict):
        metadata.update(carried["metadata"])
    if platform is not None:
        metadata.setdefault("platform", platform)
    # Through JSON once: metadata must be JSON, and this refuses what is not with a clear
    # TypeError before anything is written.
    # The id lives in ``Message.id`` (read back from there), not twice.
    ident = _usable_id(data.get("id"))
    if ident is not None:
        del data["id"]
    metadata[LANGCHAIN_KEY] = json.loads(json.dumps({"type": form["type"], "data": data}))
    reasoning = message.additional_kwargs.get("reasoning_content")
    kind = carried.get("kind") if carried is not None else None
    timestamp = carried.get("timestamp") if carried is not None else None
    return Message(
        role=_role(message),
        content=text if text is not None or not isinstance(message, AIMessage) else None,
        tool_calls=_tool_calls(message),
        tool_call_id=message.tool_call_id if isinstance(message, ToolMessage) else None,
        name=message.name,
        kind=kind if isinstance(kind, str) else None,
        timestamp=timestamp if isinstance(timestamp, int) else None,
        reasoning_content=reasoning if isinstance(reasoning, str) else None,
        metadata=metadata,
        id=ident,
    )


def _from_langchain_form(message: Message, form: dict[str, Any]) -> BaseMessage | None:
    kind = form.get("type")
    data = form.get("data")
    if not isinstance(kind, str) or not isinstance(data, dict):
        return None
    data = dict(data)
    if "content" not in data:
        data["content"] = message.content if message.content is not None else ""
    if message.id is not None:
        data["id"] = message.id
    try:
        return messages_from_dict([{"type": kind, "data": data}])[0]
    except (TypeError, ValueError, KeyError):
        return None


def from_aalis(message: Message) -> BaseMessage:
    """The LangChain message for a stored Aalis message."""
    metadata = dict(message.metadata or {})
    form = metadata.get(LANGCHAIN_KEY)
    if isinstance(form, dict):
        rebuilt = _from_langchain_form(message, form)
        if rebuilt is not None:
            return rebuilt
    carried = message.to_json()
    # The id lives in LangChain's ``id``.
    carried.pop("id", None)
    # The text lives in LangChain's ``content``; a ``None`` (a turn that only calls tools)
    # is recorded, since LangChain shows it as "".
    if carried.pop("content", None) is None:
        carried["content"] = None
    extra: dict[str, Any] = {AALIS_KEY: carried}
    if message.reasoning_content is not None:
        extra["reasoning_content"] = message.reasoning_content
    content = message.content if message.content is not None else ""
    role = message.role
    if role == "user":
        return HumanMessage(
            content=content, name=message.name, id=message.id, additional_kwargs=extra
        )
    if role == "assistant":
        calls = []
        invalid = []
        for call in message.tool_calls or ():
            try:
                args = json.loads(call.arguments)
            except ValueError:
                args = None
            if isinstance(args, dict):
                calls.append({"id": call.id, "name": call.name, "args": args, "type": "tool_call"})
            else:
                invalid.append(
                    {
                        "id": call.id,
                        "name": call.name,
                        "args": call.arguments,
                        "error": "arguments are not a JSON object",
                        "type": "invalid_tool_call",
                    }
                )
        return AIMessage(
            content=content,
            name=message.name,
            id=message.id,
            tool_calls=calls,
            invalid_tool_calls=invalid,
            additional_kwargs=extra,
        )
    if role == "system":
        return SystemMessage(
            content=content, name=message.name, id=message.id, additional_kwargs=extra
        )
    if role == "tool" and message.tool_call_id is not None:
        return ToolMessage(
            content=content,
            tool_call_id=message.tool_call_id,
            name=message.name,
            id=message.id,
            additional_kwargs=extra,
        )
    return ChatMessage(
        content=content, role=role, name=message.name, id=message.id, additional_kwargs=extra
    )


__all__ = ["AALIS_KEY", "LANGCHAIN_KEY", "from_aalis", "to_aalis"]
