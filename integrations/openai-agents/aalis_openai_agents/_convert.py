"""Responses-API input items <-> Aalis messages, lossless both ways.

Why each item becomes one Aalis message with the item kept verbatim (in
``metadata["openai_item"]``): the Agents SDK replays items to the model exactly as it stored
them (ids, statuses, reasoning summaries and encrypted content, annotations), and an item
type added by a later SDK must survive a round trip through any backend. The Aalis fields
(role, content, tool calls, reasoning, images) are filled as well, so everything else that
reads the store — ``aalis history``, recall, the summariser, ``aalis serve``, export — sees
an ordinary conversation.

Images are stored once: the parts of type ``input_image`` go to ``Message.images`` and the
verbatim copy names them by position (``{"type": "input_image", "aalis_image": i}``), so a
base64 image is not kept twice.

Messages written by someone else (``aalis chat``, the LangChain adapter, an import) carry no
verbatim item; they are converted from their Aalis fields into the nearest input items (an
assistant message with tool calls becomes a message item, when it has text, and one
``function_call`` item per call).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from aalis_schema_message import Message, ToolCall

#: Where the verbatim input item lives in ``Message.metadata``.
ITEM_KEY = "openai_item"
#: The placeholder key that names an image of ``Message.images`` inside the verbatim item.
IMAGE_REF = "aalis_image"

_TEXT_PARTS = {"input_text": "text", "output_text": "text", "refusal": "refusal"}
_MESSAGE_ROLES = {"user", "assistant", "system", "developer"}

Item = dict[str, Any]


def _check_item(item: object) -> Item:
    if not isinstance(item, Mapping):
        raise TypeError(f"a session item must be a mapping, got {type(item).__name__}")
    try:
        plain = json.loads(json.dumps(item))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a session item must be JSON data: {exc}") from None
    if not isinstance(plain, dict):  # pragma: no cover - a Mapping dumps to an object
        raise TypeError("a session item must be a JSON object")
    return plain


def _part_text(part: object) -> str | None:
    if isinstance(part, Mapping):
        key = _TEXT_PARTS.get(str(part.get("type")))
        value = part.get(key) if key else None
        return value if isinstance(value, str) else None
    return None


def _text_of(content: object) -> str | None:
    """The readable text of a message's ``content`` (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [t for t in (_part_text(p) for p in content) if t is not None]
        return "\n".join(texts) if texts else None
    return None


def _split_images(item: Item) -> tuple[Item, tuple[Any, ...] | None]:
    """``item`` with its image parts replaced by references, and the image parts."""
    content = item.get("content")
    if not isinstance(content, list):
        return item, None
    images: list[Any] = []
    parts: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "input_image":
            parts.append({"type": "input_image", IMAGE_REF: len(images)})
            images.append(part)
        else:
            parts.append(part)
    if not images:
        return item, None
    return {**item, "content": parts}, tuple(images)


def _join_images(item: Item, images: Sequence[Any] | None) -> Item:
    content = item.get("content")
    if not isinstance(content, list) or not images:
        return item
    parts: list[Any] = []
    for part in content:
        if isinstance(part, dict) and IMAGE_REF in part:
            index = part[IMAGE_REF]
            if isinstance(index, int) and 0 <= index < len(images):
                parts.append(copy.deepcopy(images[index]))
                continue
        parts.append(part)
    return {**item, "content": parts}


def _reasoning_text(item: Item) -> str | None:
    texts: list[str] = []
    for key in ("summary", "content"):
        parts = item.get(key)
        if isinstance(parts, list):
            texts.extend(
                p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return "\n".join(texts) if texts else None


def _output_text(output: object) -> str | None:
    if isinstance(output, str):
        return output
    return _text_of(output)


def item_to_message(item: object, *, platform: str | None = None) -> Message:
    """One input item as the Aalis message that stores it (raises on a non-JSON item)."""
    plain = _check_item(item)
    kind_of = plain.get("type")
    stored, images = _split_images(plain)
    metadata: dict[str, Any] = {ITEM_KEY: stored}
    if platform is not None:
        metadata["platform"] = platform
    role = plain.get("role")
    if (kind_of is None or kind_of == "message") and isinstance(role, str):
        return Message(
            role=role, content=_text_of(plain.get("content")), images=images, metadata=metadata
        )
    if kind_of == "function_call":
        call = ToolCall(
            id=str(plain.get("call_id") or plain.get("id") or ""),
            name=str(plain.get("name") or ""),
            arguments=str(plain.get("arguments") or ""),
        )
        return Message(role="assistant", content=None, tool_calls=(call,), metadata=metadata)
    if kind_of == "function_call_output":
        return Message(
            role="tool",
            content=_output_text(plain.get("output")),
            tool_call_id=str(plain.get("call_id") or ""),
            images=images,
            metadata=metadata,
        )
    if kind_of == "reasoning":
        return Message(
            role="assistant",
            kind="reasoning",
            content=None,
            reasoning_content=_reasoning_text(plain),
            metadata=metadata,
        )
    # Hosted tools, computer use, shell, MCP, compaction, item references...: kept verbatim,
    # shown as an assistant step (or a tool result for the ``*_output`` types).
    kind = str(kind_of) if kind_of is not None else "item"
    out_role = "tool" if kind.endswith("_output") else "assistant"
    return Message(
        role=out_role,
        kind=kind,
        content=None,
        tool_call_id=plain.get("call_id") if isinstance(plain.get("call_id"), str) else None,
        images=images,
        metadata=metadata,
    )


def _native_items(message: Message) -> list[Item]:
    """Input items for a message another writer saved (no verbatim item)."""
    role, text = message.role, message.content
    if role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id or "",
                "output": text or "",
            }
        ]
    if role not in _MESSAGE_ROLES:
        return []  # notices and other roles are never sent to a model
    items: list[Item] = []
    images = [i for i in message.images or () if isinstance(i, dict) and "type" in i]
    if images and role == "user":
        parts: list[Any] = [{"type": "input_text", "text": text}] if text else []
        items.append({"role": role, "content": [*parts, *copy.deepcopy(images)]})
    elif text:
        items.append({"role": role, "content": text})
    for call in message.tool_calls or ():
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def message_to_items(message: Message) -> list[Item]:
    """The input items a stored message stands for (one for items this adapter saved)."""
    if message.is_control:
        return []
    metadata = message.metadata or {}
    if metadata.get("prompt_contribution") is not None:
        return []
    stored = metadata.get(ITEM_KEY)
    if isinstance(stored, dict):
        # No deep copy: a store returns a message of its own to every reader (the memory
        # contract), so this item is already the caller's; copying it was half the read.
        return [_join_images(stored, message.images)]
    return _native_items(message)


__all__ = ["IMAGE_REF", "ITEM_KEY", "Item", "item_to_message", "message_to_items"]
