"""``OpenAIEmbedder``: an ``Embedder`` over any OpenAI-compatible ``/embeddings`` endpoint.

429 and 5xx mean "try again later" and are retried with a doubling wait inside one overall
``timeout``; any other 4xx is a mistake in the request (model name, key, input too long)
that a retry would only repeat, so it fails at once with the server's own explanation.
Error messages are built from the status and the server's error text, never from the
request, and the API key is scrubbed from them anyway in case a server echoes it.

Texts that are empty or only whitespace are not sent (OpenAI refuses empty inputs): they
embed to the zero vector, which scores 0 against everything.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Sequence
from typing import Any

import httpx
from aalis_api_embedding import (
    SEMANTIC,
    EmbedderKind,
    EmbeddingConnectionError,
    EmbeddingError,
    EmbeddingRequestError,
    EmbeddingResponseError,
    EmbeddingServerError,
    EmbeddingTimeout,
    check_text,
    check_texts,
    check_vectors,
)

from aalis_core.logging import redact
from aalis_plugin_embedding_openai.config import EmbeddingOpenaiConfig

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_ERROR_TEXT_LIMIT = 300
_PROBE_TEXT = "dimension probe"


def _safe_url(url: str) -> str:
    """The URL without user info or query string (either may carry a credential)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _utf8(text: str) -> str:
    """Lone surrogates (not encodable as UTF-8, so not sendable as JSON) become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


class OpenAIEmbedder:
    """An embedder reached over HTTP. Build it with ``await OpenAIEmbedder.connect(config)``
    (which learns ``dim`` when the config does not give it); one instance, one pool."""

    kind: EmbedderKind = SEMANTIC

    def __init__(
        self,
        config: EmbeddingOpenaiConfig,
        *,
        dim: int | None = None,
        logger: Any = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not config.base_url or not config.model:
            raise ValueError("OpenAIEmbedder needs base_url and model")
        self._config = config
        self._model = config.model
        self._url = config.base_url.rstrip("/") + "/embeddings"
        self._shown_url = _safe_url(self._url)
        self._api_key = str(config.api_key) if config.api_key else None
        self._logger = logger
        self._dim = dim if dim is not None else config.dimensions
        self._model_id = config.model_id or (
            f"openai:{config.model}"
            + (f":d{config.dimensions}" if config.dimensions is not None else "")
        )
        headers = {"User-Agent": "aalis-plugin-embedding-openai", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.AsyncClient(headers=headers, transport=transport)

    @classmethod
    async def connect(
        cls,
        config: EmbeddingOpenaiConfig,
        *,
        logger: Any = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> OpenAIEmbedder:
        embedder = cls(config, logger=logger, transport=transport)
        if embedder._dim is None:
            try:
                (vector,) = await embedder._request([_PROBE_TEXT])
            except BaseException:
                await embedder.aclose()
                raise
            if not vector:
                await embedder.aclose()
                raise EmbeddingResponseError(
                    "the endpoint returned an empty vector", model_id=embedder.model_id
                )
            embedder._dim = len(vector)
        return embedder

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise EmbeddingError("dimension not known yet: use OpenAIEmbedder.connect()")
        return self._dim

    async def aclose(self) -> None:
        await self._client.aclose()

    # -- the contract ---------------------------------------------------------------------

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed(check_texts(texts))

    async def embed_query(self, text: str) -> list[float]:
        (vector,) = await self._embed([check_text(text)])
        return vector

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        dim = self.dim
        out: list[list[float] | None] = [None] * len(texts)
        sendable = [(i, _utf8(t)) for i, t in enumerate(texts) if t.strip()]
        for i, text in enumerate(texts):
            if not text.strip():
                out[i] = [0.0] * dim
        timeout = self._config.timeout
        try:
            async with asyncio.timeout(timeout):
                size = self._config.batch_size
                for start in range(0, len(sendable), size):
                    chunk = sendable[start : start + size]
                    vectors = await self._request([t for _, t in chunk])
                    checked = check_vectors(
                        vectors, count=len(chunk), dim=dim, model_id=self.model_id
                    )
                    for (index, _), vector in zip(chunk, checked, strict=True):
                        out[index] = vector
        except TimeoutError:
            raise EmbeddingTimeout(
                f"no answer from {self._shown_url} within {timeout:g} s", model_id=self.model_id
            ) from None
        return [vector for vector in out if vector is not None]

    # -- HTTP -----------------------------------------------------------------------------

    async def _request(self, inputs: list[str]) -> list[list[float]]:
        payload: dict[str, Any] = {"model": self._model, "input": inputs}
        if self._config.dimensions is not None:
            payload["dimensions"] = self._config.dimensions
        config = self._config
        attempt = 0
        while True:
            failure: EmbeddingError
            try:
                response = await self._client.post(
                    self._url, json=payload, timeout=httpx.Timeout(config.timeout)
                )
            except httpx.TimeoutException:
                raise EmbeddingTimeout(
                    f"no answer from {self._shown_url} within {config.timeout:g} s",
                    model_id=self.model_id,
                ) from None
            except httpx.TransportError as exc:
                failure = EmbeddingConnectionError(
                    self._scrub(f"cannot reach {self._shown_url}: {type(exc).__name__}: {exc}"),
                    model_id=self.model_id,
                )
            else:
                if response.status_code == 200:
                    return self._parse(response, len(inputs))
                failure = self._status_error(response)
                if response.status_code not in _RETRY_STATUSES:
                    raise failure
            if attempt >= config.max_retries:
                raise failure
            wait = config.retry_backoff * (2**attempt)
            attempt += 1
            if self._logger is not None:
                self._logger.warning(
                    "embedding request failed, retrying",
                    model_id=self.model_id,
                    error=str(failure),
                    retry_in=round(wait, 3),
                    attempt=attempt,
                )
            await asyncio.sleep(wait)

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

    def _status_error(self, response: httpx.Response) -> EmbeddingError:
        status = response.status_code
        text = self._scrub(f"HTTP {status} from {self._shown_url}: {self._server_text(response)}")
        if status == 429 or status >= 500:
            return EmbeddingServerError(text, model_id=self.model_id, status=status)
        return EmbeddingRequestError(text, model_id=self.model_id, status=status)

    def _parse(self, response: httpx.Response, count: int) -> list[list[float]]:
        try:
            data = response.json()
        except ValueError:
            raise EmbeddingResponseError(
                f"{self._shown_url} answered 200 with a body that is not JSON",
                model_id=self.model_id,
            ) from None
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise EmbeddingResponseError(
                f"{self._shown_url} answered without a data list", model_id=self.model_id
            )
        if len(items) != count:
            raise EmbeddingResponseError(
                f"{self._shown_url} answered {len(items)} embeddings for {count} inputs",
                model_id=self.model_id,
            )
        # Servers may answer out of order; ``index`` says which input each one is for.
        if all(isinstance(item.get("index"), int) for item in items):
            items = sorted(items, key=lambda item: int(item["index"]))
            if [item["index"] for item in items] != list(range(count)):
                raise EmbeddingResponseError(
                    f"{self._shown_url} answered indexes that do not match the inputs",
                    model_id=self.model_id,
                )
        vectors = [item.get("embedding") for item in items]
        if not all(isinstance(vector, list) for vector in vectors):
            raise EmbeddingResponseError(
                f"{self._shown_url} answered an embedding that is not a list of floats",
                model_id=self.model_id,
            )
        return [list(vector) for vector in vectors if isinstance(vector, list)]


__all__ = ["OpenAIEmbedder"]
