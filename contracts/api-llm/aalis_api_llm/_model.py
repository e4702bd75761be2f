"""``ChatModel``: the one shape every chat-model provider implements.

The shape is deliberately small (messages in, text and token figures out) so that a summariser
or an agent can run on OpenAI, Ollama, llama.cpp or a scripted test model alike, and a provider
stays free to speak whatever wire format it likes behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs
from aalis_schema_message import Message


def _non_negative(inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"TokenUsage.{attribute.name} must be a non-negative int, got {value!r}")


@attrs.frozen(kw_only=True)
class TokenUsage:
    """Tokens a model call consumed, as the provider reported them (not estimated)."""

    prompt_tokens: int = attrs.field(validator=_non_negative)
    completion_tokens: int = attrs.field(validator=_non_negative)
    total_tokens: int = attrs.field(validator=_non_negative)


def _content(inst: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"ChatResult.content must be a str, got {type(value).__name__}")


@attrs.frozen(kw_only=True)
class ChatResult:
    """A finished model reply.

    ``usage`` is None when the provider does not report token figures (some local servers);
    callers then fall back to an estimate. ``finish_reason`` is passed through verbatim
    ("stop", "length", ...) so a caller can tell a truncated reply from a complete one.
    """

    content: str = attrs.field(validator=_content)
    usage: TokenUsage | None = None
    finish_reason: str | None = None
    model: str | None = None


@runtime_checkable
class ChatModel(Protocol):
    """A chat model.

    ``messages`` are Aalis messages; a provider converts them to its wire format and skips
    control kinds (``Message.is_control``), which are never sent to a model. A call either
    returns a ``ChatResult`` or raises an ``LLMError`` subclass — never a transport exception.
    The rules in full: docs/reference/llm-contract.md.
    """

    @property
    def id(self) -> str:
        """A stable name for logs and records, e.g. ``"llm-openai:gpt-4o-mini"``."""
        ...

    @property
    def context_window(self) -> int:
        """Tokens the model accepts (prompt and reply together)."""
        ...

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        """One completion of ``messages``: the reply's text and, when reported, its tokens.

        Control messages are skipped and ``metadata`` is never sent. ``temperature`` None is
        the provider's configured default, ``max_tokens`` None the server's. A failure raises an ``LLMError`` subclass (timeout,
        refused request, rate limit, server error, unreadable reply), never a transport
        exception, so a caller can decide to retry or give up without knowing the provider
        (docs/reference/llm-contract.md, "ChatModel").
        """
        ...


__all__ = ["ChatModel", "ChatResult", "TokenUsage"]
