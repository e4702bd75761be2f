"""``[plugins.user-relation]``: what the prompt block may show, and the queue's bounds."""

from __future__ import annotations

from typing import Any

import attrs

from aalis_core import positive_int


def _seconds(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(f"{attribute.name} must be a number of seconds >= 0, got {value!r}")


def _count(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative int, got {value!r}")


SCOPES = ("session", "all")


@attrs.frozen(kw_only=True)
class UserRelationConfig:
    """Settings of the fact layer (see docs/host/facts.md)."""

    #: ``session`` | ``all``: which facts the prompt block of a session may show. ``session``
    #: (the default): what the people of this session said in it. ``all``: what they said
    #: anywhere, except in a group (more than one person), which sees only itself. Anything
    #: else means ``session``, with a warning.
    recall_scope: Any = "session"
    #: Tokens the prompt block may take, at most (0 turns the block off).
    prompt_tokens: int = attrs.field(default=200, validator=_count)
    #: Facts shown per block, at most.
    prompt_limit: int = attrs.field(default=12, validator=positive_int)
    #: Messages waiting to be read, at most; beyond that a gap is recorded and backfilled.
    queue_size: int = attrs.field(default=1024, validator=positive_int)
    #: Messages read per batch (one commit per batch).
    batch_size: int = attrs.field(default=64, validator=positive_int)
    #: Seconds a turn waits for the facts of its session's messages already saved (never for
    #: other sessions' or a backfill's work; 0: never waits).
    settle_s: float = attrs.field(default=0.5, validator=_seconds)
    #: Seconds between attempts to backfill a recorded gap.
    backfill_retry_s: float = attrs.field(default=30.0, validator=_seconds)
    #: ``offline`` | ``llm``: who reads the messages. ``llm`` asks the bound ``llm`` model,
    #: one call per batch, and keeps the offline result when the call fails, is over budget
    #: or no model is bound. Anything else means ``offline``, with a warning.
    extractor: Any = "offline"
    #: Model calls the ``llm`` extractor may make per hour; beyond, the offline rules read.
    llm_calls_per_hour: int = attrs.field(default=120, validator=positive_int)
    #: Characters of messages sent in one call, at most (a larger batch is read offline).
    llm_max_chars: int = attrs.field(default=8000, validator=positive_int)
    #: Seconds one model call may take before the offline result is used.
    llm_timeout_s: float = attrs.field(default=30.0, validator=_seconds)


EXTRACTORS = ("offline", "llm")


def extractor_of(value: object, logger: Any = None) -> str:
    """``value`` as an extractor name; an invalid one is ``offline``, with a warning."""
    if value in EXTRACTORS:
        return str(value)
    if logger is not None:
        logger.warning(
            "invalid extractor; using offline", value=repr(value), valid=list(EXTRACTORS)
        )
    return "offline"


def scope_of(value: object, logger: Any = None) -> str:
    """``value`` as a scope; an invalid one is ``session`` (the narrowest), with a warning."""
    if value in SCOPES:
        return str(value)
    if logger is not None:
        logger.warning("invalid recall_scope; using session", value=repr(value), valid=list(SCOPES))
    return "session"


__all__ = ["EXTRACTORS", "SCOPES", "UserRelationConfig", "extractor_of", "scope_of"]
