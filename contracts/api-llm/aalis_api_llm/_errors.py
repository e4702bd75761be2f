"""The errors a ``ChatModel`` raises.

One hierarchy for every provider lets a consumer decide what to do (retry later, give up,
report a configuration problem) without knowing which HTTP library or server sits behind the
model. Messages never carry credentials: providers build them from status codes and the
server's error text, never from request headers.

The tree of this package's classes (under ``aalis_core._errors.AalisError``; the tree across
every package is docs/reference/errors.md)::

    LLMError
    ├── LLMTimeout          no answer within the configured time
    ├── LLMConnectionError  the server could not be reached
    ├── LLMRateLimited      the server asked to slow down (``retry_after``)
    ├── LLMRequestError     the server refused the request (4xx): a configuration problem
    ├── LLMServerError      the server failed (5xx)
    └── LLMResponseError    the reply could not be read as a chat completion
"""

from __future__ import annotations

from aalis_core import AalisError


class LLMError(AalisError):
    """Base class: the model call did not produce a usable reply."""

    def __init__(self, message: str, *, model: str | None = None) -> None:
        super().__init__(message if model is None else f"{model}: {message}")
        self.message = message
        self.model = model


class LLMTimeout(LLMError):
    """The model did not answer within the configured time."""


class LLMConnectionError(LLMError):
    """The endpoint could not be reached (refused, DNS, TLS, connection dropped)."""


class LLMRateLimited(LLMError):
    """The endpoint kept answering 429 after the provider's retries.

    ``retry_after`` is the server's last hint in seconds, when it sent one.
    """

    def __init__(
        self, message: str, *, model: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, model=model)
        self.retry_after = retry_after


class LLMRequestError(LLMError):
    """The endpoint refused the request (a 4xx other than 429): retrying will not help.

    Typical causes are a wrong model name, a bad API key or a prompt over the context window.
    """

    def __init__(
        self, message: str, *, model: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, model=model)
        self.status = status


class LLMServerError(LLMError):
    """The endpoint kept failing (5xx) after the provider's retries."""

    def __init__(
        self, message: str, *, model: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, model=model)
        self.status = status


class LLMResponseError(LLMError):
    """The endpoint answered, but not with a usable reply (not JSON, no choices, a stream
    that ended early)."""


__all__ = [
    "LLMConnectionError",
    "LLMError",
    "LLMRateLimited",
    "LLMRequestError",
    "LLMResponseError",
    "LLMServerError",
    "LLMTimeout",
]
