"""``[plugins.memory-vector]``: scope of recall, how much of it reaches the prompt, and the
indexing queue's bounds."""

from __future__ import annotations

from typing import Any

import attrs

from aalis_core import positive_int


def _count(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative int, got {value!r}")


def _seconds(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(f"{attribute.name} must be a number of seconds >= 0, got {value!r}")


def _positive_seconds(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{attribute.name} must be a number of seconds > 0, got {value!r}")


def _optional_score(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise ValueError(f"{attribute.name} must be a cosine between -1 and 1, got {value!r}")


@attrs.frozen(kw_only=True)
class PlatformProfile:
    """``[plugins.memory-vector.platforms.<platform>]``: the scope for sessions on one
    platform. Left out, the plugin default applies."""

    #: Any value is accepted here and read when a recall runs: a value that is not one of
    #: the modes means ``isolated`` (the narrowest), never the wider default.
    cross_session_mode: Any = None


@attrs.frozen(kw_only=True)
class MemoryVectorConfig:
    """Settings of semantic recall (see docs/host/recall.md)."""

    #: ``isolated`` | ``user`` | ``platform`` | ``all``; anything else means ``isolated``.
    #: ``user`` (the default): the sessions private to the same person (platform and user
    #: id); a group or a session with no person recalls only itself. ``platform``: the
    #: sessions of the same platform, groups included. ``all``: every session. See
    #: docs/host/privacy.md.
    cross_session_mode: Any = "user"
    platforms: dict[str, PlatformProfile] = attrs.field(factory=dict)
    #: Hits ``recall`` returns when the caller does not say.
    k: int = attrs.field(default=5, validator=positive_int)
    #: Hits placed in the prompt each turn (0 turns the prompt block off).
    prompt_k: int = attrs.field(default=3, validator=_count)
    #: Hits below this cosine are not placed in the prompt (``recall`` returns them anyway);
    #: a hit the lexical leg found too is kept. Unset by default: where "unrelated" starts
    #: depends on the model.
    prompt_min_score: float | None = attrs.field(default=None, validator=_optional_score)
    #: Tokens the prompt block may take, at most (the estimate of docs/compression.md):
    #: every hit, best first, before any neighbour. 600 is above the largest block measured
    #: on real-length conversations (388; docs/host/recall.md, "The prompt block") and
    #: under a tenth of an 8k window.
    prompt_tokens: int = attrs.field(default=600, validator=positive_int)
    #: Candidates of the vector leg re-ranked by the mean of the asymmetric and the
    #: symmetric cosine (each re-embedded as a query) less a quarter of their density
    #: when the query names no identifier or proper name and the embedder is semantic; 0
    #: turns re-ranking off (it costs one query embedding and one store search per
    #: candidate). Measured in docs/host/recall.md, "Re-ranking".
    rerank_depth: int = attrs.field(default=10, validator=_count)
    #: Conversation messages shown before and after each hit, from the message store.
    neighbours: int = attrs.field(default=1, validator=_count)
    #: How far (ms) around a hit neighbours are looked for.
    neighbour_window_ms: int = attrs.field(default=30 * 60 * 1000, validator=positive_int)
    #: Characters of a message that are embedded and stored; longer texts are clipped.
    max_text_chars: int = attrs.field(default=2000, validator=positive_int)
    #: Messages waiting to be embedded, at most; beyond that a gap is recorded and
    #: backfilled from the message store.
    queue_size: int = attrs.field(default=1024, validator=positive_int)
    #: Messages embedded in one call.
    batch_size: int = attrs.field(default=32, validator=positive_int)
    #: Seconds a turn waits for its own messages to be indexed before recalling.
    settle_s: float = attrs.field(default=2.0, validator=_seconds)
    #: Seconds one embedding call may take; a slower batch fails and becomes a gap.
    embed_timeout_s: float = attrs.field(default=60.0, validator=_positive_seconds)
    #: Seconds between attempts to backfill a recorded gap.
    backfill_retry_s: float = attrs.field(default=30.0, validator=_seconds)


__all__ = ["MemoryVectorConfig", "PlatformProfile"]
