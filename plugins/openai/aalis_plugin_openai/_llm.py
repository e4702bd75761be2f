"""``OpenAIChatModel``: a ``ChatModel`` over any OpenAI-compatible chat-completions endpoint.

This module builds the request (``convert.py`` decides what a model sees) and reads the
answer; retries, ``Retry-After``, the deadline, the size cap and redaction are the shared
HTTP layer's (``http.py``), whose failures are translated here into the llm contract's errors
(docs/reference/llm-contract.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from aalis_api_llm import (
    ChatResult,
    LLMConnectionError,
    LLMError,
    LLMRateLimited,
    LLMRequestError,
    LLMResponseError,
    LLMServerError,
    LLMTimeout,
    TokenUsage,
)
from aalis_schema_message import Message

from aalis_plugin_openai._config import LlmOpenaiConfig
from aalis_plugin_openai._convert import to_chat_messages
from aalis_plugin_openai._http import (
    HttpFailure,
    JsonEndpoint,
    StatusFailure,
    TimedOut,
    Unreachable,
)


class OpenAIChatModel:
    """A chat model reached over HTTP. One instance keeps one connection pool."""

    def __init__(
        self,
        config: LlmOpenaiConfig,
        *,
        logger: Any = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not config.base_url or not config.model:
            raise ValueError("OpenAIChatModel needs base_url and model")
        self._config = config
        self._model = config.model
        self._endpoint = JsonEndpoint(
            base_url=config.base_url,
            path="/chat/completions",
            api_key=str(config.api_key) if config.api_key else None,
            policy=config.policy(),
            table="plugins.llm-openai",
            log_event="llm request failed, retrying",
            log_fields={"model": self.id},
            logger=logger,
            transport=transport,
        )

    @property
    def id(self) -> str:
        return f"llm-openai:{self._model}"

    @property
    def context_window(self) -> int:
        return self._config.context_window

    async def aclose(self) -> None:
        await self._endpoint.aclose()

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        payload: dict[str, Any] = {"model": self._model, "messages": to_chat_messages(messages)}
        if temperature is None:
            temperature = self._config.temperature
        if temperature is not None:
            payload["temperature"] = temperature
        if max_tokens is not None:
            if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
                raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
            payload["max_tokens"] = max_tokens
        try:
            data = await self._endpoint.post(payload, self._endpoint.deadline())
        except HttpFailure as failure:
            raise self._error(failure) from None
        return self._parse(data)

    def _error(self, failure: HttpFailure) -> LLMError:
        text = str(failure)
        if isinstance(failure, TimedOut):
            return LLMTimeout(text, model=self.id)
        if isinstance(failure, Unreachable):
            return LLMConnectionError(text, model=self.id)
        if isinstance(failure, StatusFailure):
            if failure.status == 429:
                return LLMRateLimited(text, model=self.id, retry_after=failure.retry_after)
            if failure.status >= 500:
                return LLMServerError(text, model=self.id, status=failure.status)
            return LLMRequestError(text, model=self.id, status=failure.status)
        return LLMResponseError(text, model=self.id)

    def _parse(self, data: Any) -> ChatResult:
        shown = self._endpoint.shown_url
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMResponseError(f"{shown} answered without choices", model=self.id)
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise LLMResponseError(f"{shown} answered a choice without a message", model=self.id)
        content = message.get("content")
        if isinstance(content, list):  # some servers send content parts
            content = "".join(
                part.get("text", "")
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if not isinstance(content, str):
            refusal = message.get("refusal")
            detail = f" (refusal: {refusal})" if isinstance(refusal, str) else ""
            raise LLMResponseError(
                self._endpoint.scrub(f"the reply holds no text{detail}"), model=self.id
            )
        finish = choice.get("finish_reason")
        model = data.get("model")
        return ChatResult(
            content=content,
            usage=_usage(data.get("usage")),
            finish_reason=finish if isinstance(finish, str) else None,
            model=model if isinstance(model, str) else None,
        )


def _usage(raw: Any) -> TokenUsage | None:
    if not isinstance(raw, dict):
        return None
    values: list[int] = []
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = raw.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        values.append(value)
    prompt, completion, total = values
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total)


__all__ = ["OpenAIChatModel"]
