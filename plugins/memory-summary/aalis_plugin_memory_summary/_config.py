"""``[plugins.memory-summary]``: which summariser, and where compression triggers."""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs

SummariserChoice = Literal["auto", "llm", "extractive"]
RejectedSummaryChoice = Literal["extractive", "fail"]

#: Default bound on a summary model's reply, in characters: about 20 times what the requested
#: 1,024-token reply holds in English and 30 times in Chinese, so an honest reply always fits,
#: while a runaway one (megabytes of garbage) is refused before anything reads it and never
#: becomes a summary sent with every prompt.
DEFAULT_MAX_REPLY_CHARS = 80_000
MIN_REPLY_CHARS = 1_000


def check_ratio(value: object, what: str) -> float:
    """A ratio in [0, 1]; bools, NaN and non-numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number between 0 and 1, got {value!r}")
    if math.isnan(value) or not 0 <= value <= 1:
        raise ValueError(f"{what} must be between 0 and 1, got {value!r}")
    return float(value)


def check_non_negative_int(value: object, what: str) -> int:
    """A non-negative int (0 switches the count dimension off).

    Not ``aalis_api_memory._validation.check_count``: that one checks ``archive_span``'s
    count and also accepts ``math.inf``; a count line here is a plain int.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a non-negative int, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be 0 or more, got {value!r}")
    return value


def _ratio(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        check_ratio(value, attribute.name)


def _count(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        check_non_negative_int(value, attribute.name)


def _reply_cap(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an int (characters), got {value!r}")
    if value < MIN_REPLY_CHARS:
        raise ValueError(f"{attribute.name} must be at least {MIN_REPLY_CHARS}, got {value!r}")


def _positive(inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or not value > 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value!r}")


@attrs.frozen(kw_only=True)
class PlatformProfile:
    """``[plugins.memory-summary.platforms.<platform>]``: lines for one platform.

    A value left out falls through to the plugin default.
    """

    compress_at: float | None = attrs.field(default=None, validator=_ratio)
    history_limit: int | None = attrs.field(default=None, validator=_count)


@attrs.frozen(kw_only=True)
class MemorySummaryConfig:
    """Settings of the compression provider (docs/compression.md)."""

    #: ``auto``: the bound llm when present, else extractive; ``llm``: the model or
    #: ``unavailable``; ``extractive``: always the offline summariser.
    summariser: SummariserChoice = "auto"
    #: Usage line as a ratio of the context window (0 switches the token dimension off).
    compress_at: float = attrs.field(default=0.7, validator=_ratio)
    #: Count line in conversation messages (0 switches the count dimension off).
    history_limit: int = attrs.field(default=50, validator=_count)
    #: Kept originals may use at most this share of the compressed span's tokens.
    keep_ratio: float = attrs.field(default=0.1, validator=_ratio)
    #: Seconds the summariser may take before the compression fails as ``model_failed``.
    timeout: float = attrs.field(default=180.0, validator=_positive)
    #: A model reply longer than this (characters) is a model failure, refused before parsing.
    max_reply_chars: int = attrs.field(default=DEFAULT_MAX_REPLY_CHARS, validator=_reply_cap)
    #: What a model summary that fails the check (empty, far too short for its span, refusal
    #: or error text) leads to: ``extractive`` commits the offline summary instead (labelled
    #: as a fallback); ``fail`` fails the compression as ``model_failed``, archiving nothing.
    on_rejected_summary: RejectedSummaryChoice = "extractive"
    platforms: dict[str, PlatformProfile] = attrs.field(factory=dict)


__all__ = [
    "DEFAULT_MAX_REPLY_CHARS",
    "MemorySummaryConfig",
    "PlatformProfile",
    "RejectedSummaryChoice",
    "SummariserChoice",
    "check_non_negative_int",
    "check_ratio",
]
