"""Compression: usage figures, the pure trigger functions, and the service's shape.

The trigger functions are pure so that an agent can decide "compress now?" without a
compression provider present, and so the rule is testable without a model.
"""

from __future__ import annotations

from typing import Literal, Protocol, get_args, runtime_checkable

import attrs

from aalis_api_memory._errors import AalisMemoryError

ReasonCode = Literal[
    "busy",
    "unavailable",
    "read_failed",
    "model_failed",
    "cleared",
    "history_changed",
    "archive_failed",
]
REASON_CODES: frozenset[str] = frozenset(get_args(ReasonCode))


class CompressionError(AalisMemoryError):
    """A compression that did not commit; ``reason_code`` says why (one of ``REASON_CODES``)."""

    def __init__(self, reason_code: ReasonCode, message: str) -> None:
        if reason_code not in REASON_CODES:
            raise ValueError(f"unknown compression reason code {reason_code!r}")
        super().__init__(f"{reason_code}: {message}")
        self.reason_code: ReasonCode = reason_code
        self.message = message


@attrs.frozen(kw_only=True)
class CompressionUsage:
    """Token figures an agent reports after a model call (the ``token_usage`` event payload)."""

    used: int
    context_window: int
    token_budget: int
    compressible: int
    trimmed: bool = False
    history_messages: int = 0


@attrs.frozen(kw_only=True)
class CompressionLines:
    """Where compression triggers: a ratio of the context window, and/or a message count."""

    compress_at: float | None = None
    history_limit: int | None = None


def compression_line(usage: CompressionUsage, compress_at: float | None) -> float:
    """The token line: ``min(compress_at * context_window, token_budget)``, or the budget."""
    if compress_at is not None and compress_at > 0:
        return min(compress_at * usage.context_window, usage.token_budget)
    return float(usage.token_budget)


def compression_due(usage: CompressionUsage, lines: CompressionLines) -> bool:
    """True when either dimension says so (docs/compression.md)."""
    if lines.compress_at is not None and lines.compress_at > 0:
        line = compression_line(usage, lines.compress_at)
        if (usage.used >= line or usage.trimmed) and usage.compressible >= line / 2:
            return True
    return bool(
        lines.history_limit is not None
        and lines.history_limit > 0
        and usage.history_messages >= lines.history_limit
    )


@attrs.frozen(kw_only=True)
class SummaryRecord:
    """The current cumulative summary of a session, for prompt builders.

    ``covered_from``/``covered_to`` are the timestamps of the first and last message the
    summary covers; ``model`` names the summariser that wrote it.
    """

    text: str
    covered_from: int | None
    covered_to: int | None
    updated_at: int
    model: str


@runtime_checkable
class CompressionService(Protocol):
    """The ``compression`` capability: summarise a session's old turns and archive them.

    The rules in full: docs/compression.md ("The service").
    """

    async def compress(self, session_id: str, reason: str = "manual") -> None:
        """Compress the session now; resolves once the summary and the archive committed.

        With nothing to compress it returns without doing anything. A failure raises
        ``CompressionError`` with its reason code (``busy``, ``unavailable``, ``cleared``,
        ``history_changed``...) and leaves the history as it was.
        """
        ...

    async def compress_at(self, session_id: str, platform: str | None = None) -> float | None:
        """The session's token line as a ratio of the context window; None when it is off.

        The session's own override wins over the platform's setting, which wins over the
        global one.
        """
        ...

    async def summary(self, session_id: str) -> SummaryRecord | None:
        """The session's current summary, with what it covers and which summariser wrote it;
        None when the session was never compressed."""
        ...

    async def set_session_lines(
        self, session_id: str, *, compress_at: float | None = None, history_limit: int | None = None
    ) -> None:
        """State the session's whole override in one call: each value given is stored, each
        None removes that override. Bad values raise and change nothing."""
        ...


__all__ = [
    "REASON_CODES",
    "CompressionError",
    "CompressionLines",
    "CompressionService",
    "CompressionUsage",
    "ReasonCode",
    "SummaryRecord",
    "compression_due",
    "compression_line",
]
