"""The errors an ``Embedder`` raises.

One hierarchy for every provider lets the indexer decide what to do with a failed batch
(record a gap and retry later, or report a configuration problem) without knowing whether a
local model, a hashing function or an HTTP endpoint sits behind it. Messages never carry
credentials: providers build them from status codes and the server's error text, never from
request headers.

The tree of this package's classes (under ``aalis_core._errors.AalisError``; the tree across
every package is docs/reference/errors.md)::

    EmbeddingError
    ├── EmbeddingUnavailable     the embedder cannot run here (model or library missing)
    ├── EmbeddingTimeout         no answer within the configured time
    ├── EmbeddingConnectionError the server could not be reached
    ├── EmbeddingRequestError    the server refused the request (4xx)
    ├── EmbeddingServerError     the server failed (5xx)
    └── EmbeddingResponseError   the reply could not be read as vectors
"""

from __future__ import annotations

from aalis_core import AalisError


class EmbeddingError(AalisError):
    """Base class: the embedder did not produce usable vectors."""

    def __init__(self, message: str, *, model_id: str | None = None) -> None:
        super().__init__(message if model_id is None else f"{model_id}: {message}")
        self.message = message
        self.model_id = model_id


class EmbeddingUnavailable(EmbeddingError):
    """The embedder cannot run here at all (its model package is not installed, say).

    Retrying will not help; the message says what to install or configure.
    """


class EmbeddingTimeout(EmbeddingError):
    """The embedder did not answer within its configured time."""


class EmbeddingConnectionError(EmbeddingError):
    """A remote embedder could not be reached (refused, DNS, TLS, connection dropped)."""


class EmbeddingRequestError(EmbeddingError):
    """The endpoint refused the request (a 4xx): retrying will not help.

    Typical causes are a wrong model name, a bad API key or an input over the model's limit.
    """

    def __init__(
        self, message: str, *, model_id: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, model_id=model_id)
        self.status = status


class EmbeddingServerError(EmbeddingError):
    """The endpoint kept failing (5xx or 429) after the provider's retries."""

    def __init__(
        self, message: str, *, model_id: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, model_id=model_id)
        self.status = status


class EmbeddingResponseError(EmbeddingError):
    """The embedder answered, but not with usable vectors: the wrong number of them, the
    wrong dimension, non-finite values or a body that is not what the wire format says."""


__all__ = [
    "EmbeddingConnectionError",
    "EmbeddingError",
    "EmbeddingRequestError",
    "EmbeddingResponseError",
    "EmbeddingServerError",
    "EmbeddingTimeout",
    "EmbeddingUnavailable",
]
