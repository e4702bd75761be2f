"""Aalis messages -> the chat-completions ``messages`` array.

The Aalis ``Message`` carries more than the wire format knows (kinds, segments, metadata);
this module decides what a model sees. Control kinds (event markers, compression dividers)
never reach a model; metadata never does either (docs/reference/memory-contract.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aalis_schema_message import Message

#: Roles the chat-completions format accepts as they are.
_WIRE_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def _image_url(image: Any) -> str | None:
    if isinstance(image, str):
        return image
    if isinstance(image, dict):
        url = image.get("url")
        if isinstance(url, str):
            return url
    return None


def to_chat_message(message: Message) -> dict[str, Any]:
    """One message in the wire format.

    Roles outside the format (``notice`` and other platform roles) are sent as ``system``
    with the role as a prefix, so the model still sees the information without the server
    rejecting an unknown role.
    """
    role = message.role
    content = message.content
    if role not in _WIRE_ROLES:
        content = f"[{role}] {content}" if content else f"[{role}]"
        role = "system"
    out: dict[str, Any] = {"role": role}
    if role == "tool":
        out["tool_call_id"] = message.tool_call_id or ""
        out["content"] = content or ""
        return out
    if role == "user" and message.images:
        urls = [u for u in (_image_url(i) for i in message.images) if u]
        if urls:
            parts: list[dict[str, Any]] = []
            if content:
                parts.append({"type": "text", "text": content})
            parts.extend({"type": "image_url", "image_url": {"url": u}} for u in urls)
            out["content"] = parts
        else:
            out["content"] = content or ""
    elif role == "assistant" and message.tool_calls:
        out["content"] = content
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    else:
        out["content"] = content or ""
    if message.name and role in ("user", "assistant", "system", "developer"):
        out["name"] = message.name
    return out


def to_chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The whole prompt, control kinds skipped."""
    return [to_chat_message(m) for m in messages if not m.is_control]


__all__ = ["to_chat_message", "to_chat_messages"]
