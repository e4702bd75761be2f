"""``[plugins.chat]``: the chat's system prompt and its prompt budget."""

from __future__ import annotations

from typing import Any

import attrs

from aalis_core import positive_int, positive_seconds

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly and accurately."


def person_platform(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A non-empty name without ':' or surrounding spaces (half of ``PLATFORM:USER_ID``)."""
    if not isinstance(value, str) or not value.strip() or value != value.strip() or ":" in value:
        raise ValueError(
            f"{attribute.name} must be a non-empty name without ':' or surrounding spaces, "
            f"got {value!r}"
        )


@attrs.frozen(kw_only=True)
class ChatConfig:
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    #: Tokens reserved for each reply (sent as ``max_tokens``).
    max_reply_tokens: int = attrs.field(default=1024, validator=positive_int)
    #: Conversation messages read from memory for one prompt, at most (the newest ones);
    #: the prompt is then trimmed further to the model's context window.
    history_fetch: int = attrs.field(default=200, validator=positive_int)
    #: Context window the offline stand-in pretends to have (drives compression lines).
    stand_in_context_window: int = attrs.field(default=8192, validator=positive_int)
    #: Seconds each prompt contributor (e.g. semantic recall) may take per turn.
    contribution_timeout: float = attrs.field(default=5.0, validator=positive_seconds)
    #: Seconds a line waits while another process (or chat) holds this session's turn,
    #: before it fails with "busy" (docs/reference/turn.md).
    turn_wait: float = attrs.field(default=120.0, validator=positive_seconds)
    #: ``metadata["platform"]`` of the messages this chat saves (compression profiles key);
    #: with the OS login as ``user_id``, the person its user messages are stamped with.
    platform: str = attrs.field(default="cli", validator=person_platform)


__all__ = ["DEFAULT_SYSTEM_PROMPT", "ChatConfig"]
