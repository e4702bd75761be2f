"""``OpenAIEmbedder``: an ``Embedder`` over any OpenAI-compatible ``/embeddings`` endpoint.

This module batches texts, builds the request and checks the vectors; retries,
``Retry-After``, the deadline, the size cap and redaction are the shared HTTP layer's
(``http.py``), whose failures are translated here into the embedding contract's errors. One
deadline (``timeout``) bounds a whole ``embed_documents`` call, every batch included; the
request that learns the width at start gets one of its own.

Texts that are empty or only whitespace are not sent (OpenAI refuses empty inputs): they
embed to the zero vector, which scores 0 against everything.
"""

from __future__ import annotations

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

from aalis_plugin_openai._config import EmbeddingOpenaiConfig
from aalis_plugin_openai._http import (
    Deadline,
    HttpFailure,
    JsonEndpoint,
    StatusFailure,
    TimedOut,
    Unreachable,
)

_PROBE_TEXT = "dimension probe"


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
        self._dim = dim if dim is not None else config.dimensions
        self._model_id = config.model_id or (
            f"openai:{config.model}"
            + (f":d{config.dimensions}" if config.dimensions is not None else "")
        )
        self._endpoint = JsonEndpoint(
            base_url=config.base_url,
            path="/embeddings",
            api_key=str(config.api_key) if config.api_key else None,
            policy=config.policy(),
            table="plugins.embedding-openai",
            log_event="embedding request failed, retrying",
            log_fields={"model_id": self._model_id},
            logger=logger,
            transport=transport,
        )

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
                (vector,) = await embedder._request([_PROBE_TEXT], embedder._endpoint.deadline())
                if not vector:
                    raise EmbeddingResponseError(
                        "the endpoint returned an empty vector", model_id=embedder.model_id
                    )
            except BaseException:
                await embedder.aclose()
                raise
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
        await self._endpoint.aclose()

    # -- the contract ---------------------------------------------------------------------

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed(check_texts(texts))

    async def embed_query(self, text: str) -> list[float]:
        (vector,) = await self._embed([check_text(text)])
        return vector

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Several queries in one request (the optional ``QueryBatch``): memory-vector's
        re-ranking asks for its candidates this way, one round trip instead of ten."""
        return await self._embed(check_texts(texts))

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        dim = self.dim
        out: list[list[float] | None] = [None] * len(texts)
        sendable = [(i, _utf8(t)) for i, t in enumerate(texts) if t.strip()]
        for i, text in enumerate(texts):
            if not text.strip():
                out[i] = [0.0] * dim
        deadline = self._endpoint.deadline()
        size = self._config.batch_size
        for start in range(0, len(sendable), size):
            chunk = sendable[start : start + size]
            vectors = await self._request([t for _, t in chunk], deadline)
            checked = check_vectors(vectors, count=len(chunk), dim=dim, model_id=self.model_id)
            for (index, _), vector in zip(chunk, checked, strict=True):
                out[index] = vector
        return [vector for vector in out if vector is not None]

    # -- one request ----------------------------------------------------------------------

    async def _request(self, inputs: list[str], deadline: Deadline) -> list[list[float]]:
        payload: dict[str, Any] = {"model": self._model, "input": inputs}
        if self._config.dimensions is not None:
            payload["dimensions"] = self._config.dimensions
        try:
            data = await self._endpoint.post(payload, deadline)
        except HttpFailure as failure:
            raise self._error(failure) from None
        return self._parse(data, len(inputs))

    def _error(self, failure: HttpFailure) -> EmbeddingError:
        text = str(failure)
        if isinstance(failure, TimedOut):
            return EmbeddingTimeout(text, model_id=self.model_id)
        if isinstance(failure, Unreachable):
            return EmbeddingConnectionError(text, model_id=self.model_id)
        if isinstance(failure, StatusFailure):
            # The contract has no rate-limit error: a 429 that outlived the retries is a
            # server that kept failing, with its status.
            if failure.status == 429 or failure.status >= 500:
                return EmbeddingServerError(text, model_id=self.model_id, status=failure.status)
            return EmbeddingRequestError(text, model_id=self.model_id, status=failure.status)
        return EmbeddingResponseError(text, model_id=self.model_id)

    def _parse(self, data: Any, count: int) -> list[list[float]]:
        shown = self._endpoint.shown_url
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise EmbeddingResponseError(
                f"{shown} answered without a data list", model_id=self.model_id
            )
        if len(items) != count:
            raise EmbeddingResponseError(
                f"{shown} answered {len(items)} embeddings for {count} inputs",
                model_id=self.model_id,
            )
        # Servers may answer out of order; ``index`` says which input each one is for.
        if all(isinstance(item.get("index"), int) for item in items):
            items = sorted(items, key=lambda item: int(item["index"]))
            if [item["index"] for item in items] != list(range(count)):
                raise EmbeddingResponseError(
                    f"{shown} answered indexes that do not match the inputs",
                    model_id=self.model_id,
                )
        vectors = [item.get("embedding") for item in items]
        if not all(isinstance(vector, list) for vector in vectors):
            raise EmbeddingResponseError(
                f"{shown} answered an embedding that is not a list of floats",
                model_id=self.model_id,
            )
        return [list(vector) for vector in vectors if isinstance(vector, list)]


__all__ = ["OpenAIEmbedder"]
