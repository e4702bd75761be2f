"""``[plugins.embedding-openai]``: where the endpoint is, which model, how patient to be."""

from __future__ import annotations

from typing import Any

import attrs


def _positive(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{attribute.name} must be a number, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value!r}")


def _non_negative(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{attribute.name} must be a number, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value!r}")


def _optional_positive_int(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value}")


def _url(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https://, got {value!r}")


def _optional_str(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{attribute.name} must be a non-empty string")


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
    batch_size: int = attrs.field(default=64, validator=_optional_positive_int)
    #: Seconds one embed call may take in total, retries and their waits included.
    timeout: float = attrs.field(default=30.0, validator=_positive)
    #: Extra attempts after a 429, a 5xx or a dropped connection.
    max_retries: int = attrs.field(default=2, validator=_non_negative)
    #: First wait (seconds) between attempts; doubles on each retry.
    retry_backoff: float = attrs.field(default=0.5, validator=_non_negative)
    #: Priority among ``embedding`` providers: above embedding-local (10), since configuring
    #: an endpoint is a deliberate choice.
    priority: int = 20


__all__ = ["EmbeddingOpenaiConfig"]
