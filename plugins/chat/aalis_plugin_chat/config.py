"""``[plugins.chat]``: the chat's system prompt and its prompt budget."""

from __future__ import annotations

from typing import Any

import attrs

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly and accurately."


def _positive(inst: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{attribute.name} must be a positive int, got {value!r}")


def _positive_seconds(inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{attribute.name} must be a positive number of seconds, got {value!r}")


@attrs.frozen(kw_only=True)
class ChatConfig:
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    #: Tokens reserved for each reply (sent as ``max_tokens``).
    max_reply_tokens: int = attrs.field(default=1024, validator=_positive)
    #: Conversation messages read from memory for one prompt, at most (the newest ones);
    #: the prompt is then trimmed further to the model's context window.
    history_fetch: int = attrs.field(default=200, validator=_positive)
    #: Context window the offline stand-in pretends to have (drives compression lines).
    stand_in_context_window: int = attrs.field(default=8192, validator=_positive)
    #: Seconds each prompt contributor (e.g. semantic recall) may take per turn.
    contribution_timeout: float = attrs.field(default=5.0, validator=_positive_seconds)
    #: ``metadata["platform"]`` of the messages this chat saves (compression profiles key).
    platform: str = "cli"


__all__ = ["DEFAULT_SYSTEM_PROMPT", "ChatConfig"]
