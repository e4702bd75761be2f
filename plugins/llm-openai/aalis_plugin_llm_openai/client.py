"""``OpenAIChatModel``: a ``ChatModel`` over any OpenAI-compatible chat-completions endpoint.

Why the retry policy looks like this: 429 and 5xx are the two answers that mean "try again
later", and servers that send ``Retry-After`` (or OpenAI's ``retry-after-ms``) know better than
any backoff formula when "later" is. Everything else in the 4xx range is a mistake in the
request (model name, key, prompt size) that a retry would only repeat, so it fails at once
with the server's own explanation. ``timeout`` bounds the whole call, waits included, so a
caller (a compression, a chat turn) can rely on one number.

Error messages are built from the status and the server's error text, never from the request;
the API key is scrubbed from them anyway, in case a server echoes it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import time
import urllib.parse
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

from aalis_core.logging import redact
from aalis_plugin_llm_openai.config import LlmOpenaiConfig
from aalis_plugin_llm_openai.convert import to_chat_messages

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_ERROR_TEXT_LIMIT = 300


def _safe_url(url: str) -> str:
    """The URL without user info or query string (either may carry a credential)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def parse_retry_after(headers: httpx.Headers, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, then ``Retry-After`` (seconds
    or an HTTP date). None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
            if math.isfinite(value) and value >= 0:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        current = time.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    return value if math.isfinite(value) and value >= 0 else None


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
        self._url = config.base_url.rstrip("/") + "/chat/completions"
        self._shown_url = _safe_url(self._url)
        self._api_key = str(config.api_key) if config.api_key else None
        self._logger = logger
        headers = {"User-Agent": "aalis-plugin-llm-openai", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.AsyncClient(headers=headers, transport=transport)

    @property
    def id(self) -> str:
        return f"llm-openai:{self._model}"

    @property
    def context_window(self) -> int:
        return self._config.context_window

    async def aclose(self) -> None:
        await self._client.aclose()

    # -- the call ---------------------------------------------------------------------------

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
        timeout = self._config.timeout
        try:
            async with asyncio.timeout(timeout):
                return await self._with_retries(payload, time.monotonic() + timeout)
        except TimeoutError:
            raise LLMTimeout(
                f"no answer from {self._shown_url} within {timeout:g} s", model=self.id
            ) from None

    async def _with_retries(self, payload: dict[str, Any], deadline: float) -> ChatResult:
        config = self._config
        attempt = 0
        while True:
            remaining = max(0.001, deadline - time.monotonic())
            failure: LLMError
            wait: float | None = None
            try:
                response = await self._post(payload, remaining)
            except httpx.TimeoutException:
                raise LLMTimeout(
                    f"no answer from {self._shown_url} within {config.timeout:g} s", model=self.id
                ) from None
            except httpx.TransportError as exc:
                failure = LLMConnectionError(
                    self._scrub(f"cannot reach {self._shown_url}: {type(exc).__name__}: {exc}"),
                    model=self.id,
                )
            else:
                if response.status_code == 200:
                    return self._parse(response)
                failure = self._status_error(response)
                if response.status_code not in _RETRY_STATUSES:
                    raise failure
                wait = parse_retry_after(response.headers)
            if attempt >= config.max_retries:
                raise failure
            if wait is None:
                wait = config.retry_backoff * (2**attempt)
            wait = min(wait, config.max_retry_wait)
            if time.monotonic() + wait >= deadline:
                # Waiting would run past the caller's deadline: report the real cause now.
                raise failure
            attempt += 1
            if self._logger is not None:
                self._logger.warning(
                    "llm request failed, retrying",
                    model=self.id,
                    error=str(failure),
                    retry_in=round(wait, 3),
                    attempt=attempt,
                )
            await asyncio.sleep(wait)

    async def _post(self, payload: dict[str, Any], remaining: float) -> httpx.Response:
        """POST and read at most ``max_response_bytes`` of the body (``LLMResponseError``)."""
        limit = self._config.max_response_bytes
        request = self._client.build_request(
            "POST", self._url, json=payload, timeout=httpx.Timeout(remaining)
        )
        response = await self._client.send(request, stream=True)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise self._too_large(limit)
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise self._too_large(limit)
                chunks.append(chunk)
        finally:
            await response.aclose()
        # The body is already decoded: drop the encoding header so it is not decoded twice.
        headers = [(k, v) for k, v in response.headers.multi_items() if k != "content-encoding"]
        return httpx.Response(
            response.status_code, headers=headers, content=b"".join(chunks), request=request
        )

    def _too_large(self, limit: int) -> LLMResponseError:
        return LLMResponseError(
            f"{self._shown_url} sent a response larger than {limit} bytes; not read "
            "(raise [plugins.llm-openai] max_response_bytes if the endpoint is trusted)",
            model=self.id,
        )

    # -- responses --------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return redact(text)

    def _server_text(self, response: httpx.Response) -> str:
        text = response.text
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                text = error["message"]
            elif isinstance(error, str):
                text = error
            elif isinstance(data.get("message"), str):
                text = data["message"]
        text = " ".join(text.split())
        if len(text) > _ERROR_TEXT_LIMIT:
            text = text[: _ERROR_TEXT_LIMIT - 3] + "..."
        return text or response.reason_phrase or "no details"

    def _status_error(self, response: httpx.Response) -> LLMError:
        status = response.status_code
        text = self._scrub(f"HTTP {status} from {self._shown_url}: {self._server_text(response)}")
        if status == 429:
            return LLMRateLimited(
                text, model=self.id, retry_after=parse_retry_after(response.headers)
            )
        if status >= 500:
            return LLMServerError(text, model=self.id, status=status)
        return LLMRequestError(text, model=self.id, status=status)

    def _parse(self, response: httpx.Response) -> ChatResult:
        try:
            data = response.json()
        except ValueError:
            raise LLMResponseError(
                f"{self._shown_url} answered 200 with a body that is not JSON", model=self.id
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMResponseError(f"{self._shown_url} answered without choices", model=self.id)
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise LLMResponseError(
                f"{self._shown_url} answered a choice without a message", model=self.id
            )
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
            raise LLMResponseError(f"the reply holds no text{detail}", model=self.id)
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


__all__ = ["OpenAIChatModel", "parse_retry_after"]
