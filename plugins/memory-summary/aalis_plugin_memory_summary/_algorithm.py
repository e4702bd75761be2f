"""The compression algorithm, steps 1-3 of docs/compression.md ("The algorithm"): which span
of a snapshot is compressed, which originals stay, and the summary text.

Nothing here writes: the span and the summary are computed from what was read, so a slow or
failing summary model leaves history and summary as they were. Writing is the committer's
job (``commit.py``); the service runs the two in order with the job checks in between.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
from aalis_api_llm import ChatModel
from aalis_api_memory import CompressionError, SummaryRecord
from aalis_schema_message import Message, now_ms

from aalis_core import CapabilityAbsent
from aalis_plugin_memory_summary._check import SummaryRejected
from aalis_plugin_memory_summary._config import MemorySummaryConfig
from aalis_plugin_memory_summary._error_text import error_text
from aalis_plugin_memory_summary._fallback import vetted
from aalis_plugin_memory_summary._prompt import ParsedReply
from aalis_plugin_memory_summary._spans import (
    ToolGroup,
    conversation_positions,
    select_keep,
    tool_groups,
    turn_split,
)
from aalis_plugin_memory_summary._summarisers import (
    ExtractiveSummariser,
    LlmSummariser,
    Summariser,
)

if TYPE_CHECKING:
    from aalis_core import Handle


@attrs.frozen
class Span:
    """Where a compression cuts its snapshot (step 1).

    ``positions``: the conversation messages before the split the summariser is shown;
    ``healed``: positions the stored summary already covers (a commit that stopped after
    saving it), archived with this commit and never shown to the model again.
    """

    split: int
    groups: tuple[ToolGroup, ...]
    positions: tuple[int, ...]
    healed: tuple[int, ...]

    @property
    def empty(self) -> bool:
        """Nothing to summarise and nothing to heal: the compression has nothing to do."""
        return not self.positions and not self.healed


@attrs.frozen
class Draft:
    """What the summariser produced: the record to store and the originals that stay."""

    record: SummaryRecord
    kept: tuple[int, ...]
    model_id: str


def summariser_for(config: MemorySummaryConfig, llm: Handle[ChatModel]) -> Summariser:
    """The summariser ``config.summariser`` asks for, as far as the bound ``llm`` allows.

    ``"auto"`` falls back to the extractive summariser without a model, so a host without
    one still compresses; ``"llm"`` without a model is ``unavailable`` instead.
    """
    choice = config.summariser
    if choice == "extractive":
        return ExtractiveSummariser()
    if llm.present:
        try:
            model = llm.use
            model_id = str(model.id)
        except CapabilityAbsent:
            pass
        else:
            return LlmSummariser(model, model_id, max_reply_chars=config.max_reply_chars)
    if choice == "llm":
        raise CompressionError(
            "unavailable", 'summariser = "llm" but no llm provider is bound to memory-summary'
        )
    return ExtractiveSummariser()


def shrunk(seen_messages: int, snapshot: Sequence[Message]) -> bool:
    """Whether the active history holds fewer conversation messages than the usage said.

    Then another process (or host) compressed or cleared it since the usage was measured:
    what is left is not what crossed the line.
    """
    if not seen_messages:
        return False
    return sum(1 for m in snapshot if not m.is_control) < seen_messages


def choose_span(snapshot: Sequence[Message], ids: Sequence[str], covered: frozenset[str]) -> Span:
    """The split at a turn boundary, never inside a tool group; and what to summarise."""
    healed = tuple(i for i, ident in enumerate(ids) if ident in covered)
    groups = tool_groups(snapshot)
    split = turn_split(snapshot, groups)
    skip = set(healed)
    positions = tuple(p for p in conversation_positions(snapshot, 0, split) if p not in skip)
    return Span(split, tuple(groups), positions, healed)


async def draft(
    summariser: Summariser,
    previous: SummaryRecord | None,
    snapshot: Sequence[Message],
    span: Span,
    *,
    config: MemorySummaryConfig,
    history_limit: int,
    log: Any,
    session_id: str,
) -> Draft:
    """The new cumulative summary of ``span`` and the keep list (steps 2 and 3).

    Only healing (no new positions): the stored summary already says everything, it is
    committed again as it is and nothing is kept.
    """
    if not span.positions:
        assert previous is not None  # covered ids come from the stored summary
        return Draft(previous, (), previous.model)
    reply, model_id = await _summarise(
        summariser,
        previous,
        snapshot,
        span.positions,
        config=config,
        log=log,
        session_id=session_id,
    )
    # 3. The keep list, capped.
    choice = select_keep(
        snapshot,
        span.split,
        reply.keep,
        keep_ratio=config.keep_ratio,
        history_limit=history_limit,
        groups=span.groups,
    )
    skip = set(span.healed)
    kept = tuple(p for p in choice.positions if p not in skip)
    record = SummaryRecord(
        text=reply.summary.strip(),
        covered_from=(
            previous.covered_from
            if previous is not None and previous.covered_from is not None
            else snapshot[span.positions[0]].timestamp
        ),
        covered_to=latest(
            previous.covered_to if previous is not None else None,
            snapshot[span.positions[-1]].timestamp,
        ),
        updated_at=now_ms(),
        model=model_id,
    )
    return Draft(record, kept, model_id)


async def _summarise(
    summariser: Summariser,
    previous: SummaryRecord | None,
    snapshot: Sequence[Message],
    positions: Sequence[int],
    *,
    config: MemorySummaryConfig,
    log: Any,
    session_id: str,
) -> tuple[ParsedReply, str]:
    """The summariser's reply, vetted, and the id of the summariser that wrote it (step 2)."""
    reply: ParsedReply | None = None
    rejected: str | None = None
    try:
        async with asyncio.timeout(config.timeout):
            reply = await summariser.summarise(
                previous.text if previous else None, snapshot, positions
            )
    except SummaryRejected as exc:
        rejected = exc.reason
    except TimeoutError:
        raise CompressionError(
            "model_failed",
            f"{summariser.id} gave no summary within {config.timeout:g} s",
        ) from None
    except Exception as exc:
        raise CompressionError("model_failed", f"{summariser.id}: {error_text(exc)}") from exc
    if reply is not None and not reply.summary.strip():
        raise CompressionError("model_failed", f"{summariser.id} returned an empty summary")
    # A model summary that cannot carry its span is never committed (check.py).
    return await vetted(
        summariser,
        reply,
        previous.text if previous else None,
        snapshot,
        positions,
        on_rejected=config.on_rejected_summary,
        log=log,
        session_id=session_id,
        rejected=rejected,
    )


def latest(previous: int | None, newest: int | None) -> int | None:
    """The end of a cumulative summary's range: it never moves back.

    A save with an older timestamp (another process, a platform clock) can be the newest
    message a compression covers while the previous summary already reached further; the
    summary still covers what the previous one did.
    """
    if previous is None:
        return newest
    if newest is None:
        return previous
    return max(previous, newest)


__all__ = ["Draft", "Span", "choose_span", "draft", "latest", "shrunk", "summariser_for"]
