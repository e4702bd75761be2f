"""``[plugins.llm-openai]`` and ``[plugins.embedding-openai]``: where each endpoint is, which
model, how patient to be with it.

Two tables, not one: a chat model and an embedding model are different models, often on
different servers (chat at a provider, embeddings on a local Ollama), with different
patience; each plugin is enabled, pinned and disabled on its own (docs/host/openai.md). The
keys both share (``base_url``, ``api_key``, ``timeout``, the retry and size keys) mean the
same in both and feed the one HTTP layer (``RetryPolicy``).
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How patient one client is: what the HTTP layer (``http.py``) reads of either config.

    Kept here, not in ``http.py``, so that loading a plugin class does not import httpx."""

    #: Seconds one call may take in total, attempts and waits included.
    timeout: float
    #: Extra attempts after a 429, a 5xx or a dropped connection.
    max_retries: int
    #: First wait when the server gives no ``Retry-After``; doubles on each retry.
    retry_backoff: float
    #: Upper bound of any single wait, ``Retry-After`` included.
    max_retry_wait: float
    #: The most bytes of one response body read.
    max_response_bytes: int


def _positive(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{attribute.name} must be a number, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value!r}")


def _positive_int(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value}")


def _optional_positive_int(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        _positive_int(inst, attribute, value)


def _non_negative(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{attribute.name} must be a number, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value!r}")


def _url(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https://, got {value!r}")


def _optional_str(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{attribute.name} must be a non-empty string")


def _temperature(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"temperature must be a number, got {type(value).__name__}")
    if not 0 <= value <= 2:
        raise ValueError(f"temperature must be between 0 and 2, got {value!r}")


def _policy(config: LlmOpenaiConfig | EmbeddingOpenaiConfig) -> RetryPolicy:
    return RetryPolicy(
        timeout=config.timeout,
        max_retries=config.max_retries,
        retry_backoff=config.retry_backoff,
        max_retry_wait=config.max_retry_wait,
        max_response_bytes=config.max_response_bytes,
    )


@attrs.frozen(kw_only=True)
class LlmOpenaiConfig:
    """Settings of the OpenAI-compatible chat client.

    ``base_url`` and ``model`` have no defaults on purpose: guessing an endpoint would send a
    conversation somewhere the user did not choose. Without them the plugin is disabled.
    ``api_key`` is normally written as ``"${OPENAI_API_KEY}"`` so the secret stays out of the
    file; it is excluded from ``repr`` so a logged config never shows it.
    """

    base_url: str | None = attrs.field(default=None, validator=_url)
    model: str | None = attrs.field(default=None, validator=_optional_str)
    api_key: str | None = attrs.field(default=None, repr=False)
    #: Tokens the model accepts; used by compression lines and prompt budgets.
    context_window: int = attrs.field(default=8192, validator=_positive_int)
    #: Seconds one ``chat`` call may take in total, retries and their waits included.
    timeout: float = attrs.field(default=60.0, validator=_positive)
    #: Extra attempts after a 429, a 5xx or a dropped connection.
    max_retries: int = attrs.field(default=2, validator=_non_negative)
    #: First wait (seconds) when the server gives no Retry-After; doubles on each retry.
    retry_backoff: float = attrs.field(default=1.0, validator=_non_negative)
    #: Upper bound of any single wait, Retry-After included.
    max_retry_wait: float = attrs.field(default=30.0, validator=_non_negative)
    #: Default sampling temperature when a caller passes none (None: the server's default).
    temperature: float | None = attrs.field(default=None, validator=_temperature)
    #: The most bytes of one response body read (4 MiB); a larger one is refused, so a broken
    #: or hostile endpoint cannot fill the memory with hundreds of megabytes.
    max_response_bytes: int = attrs.field(default=4 * 1024 * 1024, validator=_positive_int)
    #: Priority of this provider among several ``llm`` providers.
    priority: int = 0

    def policy(self) -> RetryPolicy:
        """The keys the HTTP layer reads."""
        return _policy(self)


@attrs.frozen(kw_only=True)
class EmbeddingOpenaiConfig:
    """Settings of the OpenAI-compatible embeddings client.

    ``base_url`` (up to ``/v1``) and ``model`` have no defaults: guessing an endpoint would
    send conversation text somewhere the user did not choose, so without them the plugin is
    disabled. ``api_key`` is normally ``"${OPENAI_API_KEY}"`` and never printed.
    ``dimensions`` is sent to the server (OpenAI's text-embedding-3 models shorten vectors
    to it) and is the embedder's ``dim``; unset, the width is learnt by one request at
    start. ``model_id`` overrides the vector-space id (default ``openai:<model>``), for two
    servers that serve one model under different names.
    """

    base_url: str | None = attrs.field(default=None, validator=_url)
    model: str | None = attrs.field(default=None, validator=_optional_str)
    api_key: str | None = attrs.field(default=None, repr=False)
    dimensions: int | None = attrs.field(default=None, validator=_optional_positive_int)
    model_id: str | None = attrs.field(default=None, validator=_optional_str)
    #: Texts per request.
    batch_size: int = attrs.field(default=64, validator=_positive_int)
    #: Seconds one embed call may take in total (every batch, retries and their waits
    #: included); the request that learns the width at start gets as long.
    timeout: float = attrs.field(default=30.0, validator=_positive)
    #: Extra attempts after a 429, a 5xx or a dropped connection.
    max_retries: int = attrs.field(default=2, validator=_non_negative)
    #: First wait (seconds) when the server gives no Retry-After; doubles on each retry.
    retry_backoff: float = attrs.field(default=0.5, validator=_non_negative)
    #: Upper bound of any single wait, Retry-After included.
    max_retry_wait: float = attrs.field(default=30.0, validator=_non_negative)
    #: The most bytes of one response body read (32 MiB: a batch of 64 vectors of 3,072
    #: floats is up to about 4.5 MB of JSON, so the default leaves room for larger batches); a
    #: larger one is refused, so a broken or hostile endpoint cannot fill the memory.
    max_response_bytes: int = attrs.field(default=32 * 1024 * 1024, validator=_positive_int)
    #: Priority among ``embedding`` providers: above embedding-local (10), since configuring
    #: an endpoint is a deliberate choice.
    priority: int = 20

    def policy(self) -> RetryPolicy:
        """The keys the HTTP layer reads."""
        return _policy(self)


__all__ = ["EmbeddingOpenaiConfig", "LlmOpenaiConfig", "RetryPolicy"]
