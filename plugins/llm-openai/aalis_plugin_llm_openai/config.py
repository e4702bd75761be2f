"""``[plugins.llm-openai]``: where the endpoint is and how patient to be with it."""

from __future__ import annotations

from typing import Any

import attrs


def _positive(inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value!r}")


def _non_negative(inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value!r}")


def _url(inst: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https://, got {value!r}")


def _temperature(inst: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not 0 <= value <= 2:
        raise ValueError(f"temperature must be between 0 and 2, got {value!r}")


@attrs.frozen(kw_only=True)
class LlmOpenaiConfig:
    """Settings of the OpenAI-compatible client.

    ``base_url`` and ``model`` have no defaults on purpose: guessing an endpoint would send a
    conversation somewhere the user did not choose. Without them the plugin is disabled.
    ``api_key`` is normally written as ``"${OPENAI_API_KEY}"`` so the secret stays out of the
    file; it is excluded from ``repr`` so a logged config never shows it.
    """

    base_url: str | None = attrs.field(default=None, validator=_url)
    model: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    #: Tokens the model accepts; used by compression lines and prompt budgets.
    context_window: int = attrs.field(default=8192, validator=_positive)
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
    max_response_bytes: int = attrs.field(default=4 * 1024 * 1024, validator=_positive)
    #: Priority of this provider among several ``llm`` providers.
    priority: int = 0


__all__ = ["LlmOpenaiConfig"]
