"""What a compression does with a model summary the check rejects (docs/compression.md).

``check.py`` says whether a summary can carry its span; this module decides what happens when
it cannot: the extractive summary of the same span replaces it, recorded under a summariser
id that says so, or the compression fails as ``model_failed`` (``on_rejected_summary``).
Either way the rejected text is never committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aalis_agent import estimate_text_tokens, model_text
from aalis_api_memory import CompressionError
from aalis_schema_message import Message

from aalis_plugin_memory_summary._check import check_summary
from aalis_plugin_memory_summary._prompt import ParsedReply
from aalis_plugin_memory_summary._summarisers import ExtractiveSummariser, LlmSummariser, Summariser


def carried_tokens(
    previous: str | None, snapshot: Sequence[Message], positions: Sequence[int]
) -> int:
    """What a summary of ``positions`` has to carry: the previous summary and the span's texts."""
    return estimate_text_tokens(previous or "") + sum(
        estimate_text_tokens(model_text(snapshot[p])) for p in positions
    )


def fallback_id(model_id: str, reason: str) -> str:
    """The summariser id a fallback summary is recorded under (``SummaryRecord.model``)."""
    return f"{ExtractiveSummariser.id} (fallback: {model_id} summary rejected: {reason})"


async def vetted(
    summariser: Summariser,
    reply: ParsedReply | None,
    previous: str | None,
    snapshot: Sequence[Message],
    positions: Sequence[int],
    *,
    on_rejected: str,
    log: Any,
    session_id: str,
    rejected: str | None = None,
) -> tuple[ParsedReply, str]:
    """``reply`` and its summariser's id when the summary passes, else the fallback's.

    ``reply`` None means the summariser already rejected one of its chunks, for
    ``rejected`` (the reason). Only a model's summary is checked. A rejected one is replaced
    by the extractive summary of the same span (``on_rejected == "extractive"``), recorded
    under ``fallback_id``, or fails the compression as ``model_failed`` (``"fail"``).
    """
    if reply is not None:
        if not isinstance(summariser, LlmSummariser):
            return reply, summariser.id
        verdict = check_summary(reply.summary, carried_tokens(previous, snapshot, positions))
        if verdict.ok:
            return reply, summariser.id
        rejected = verdict.reason
    reason = rejected or "rejected"
    if on_rejected != "extractive":
        log.warning(
            "model summary rejected",
            session_id=session_id,
            model=summariser.id,
            reason=reason,
            fallback=None,
        )
        raise CompressionError("model_failed", f"{summariser.id} summary rejected: {reason}")
    log.warning(
        "model summary rejected, using the extractive summary instead",
        session_id=session_id,
        model=summariser.id,
        reason=reason,
        fallback=ExtractiveSummariser.id,
    )
    try:
        fallback = await ExtractiveSummariser().summarise(previous, snapshot, positions)
    except Exception as exc:
        raise CompressionError(
            "model_failed",
            f"{summariser.id} summary rejected ({reason}) and the extractive fallback"
            f" failed: {exc}",
        ) from exc
    return fallback, fallback_id(summariser.id, reason)


__all__ = ["carried_tokens", "fallback_id", "vetted"]
