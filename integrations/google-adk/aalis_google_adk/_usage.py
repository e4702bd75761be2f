"""How full a session is, told to the compression provider (the ``token_usage`` event).

memory-summary compresses a session by itself when an agent reports, after a model call,
that the session crossed one of its lines (docs/compression.md): the token line (a share of
the model's context window) or the count line (``history_limit`` messages). ADK puts the
model's token figures on each event it produced (``usage_metadata``); the service knows the
model's window only when the app says it (``context_window=``). Without the window the
report carries the message count alone, so only the count line can fire: a token figure
without its window would cross any line.
"""

from __future__ import annotations

import math
from typing import Any

from aalis_agent import estimate_message_tokens
from aalis_api_memory import CompressionUsage, FullHistory, MemoryService, supports

from aalis_core import get_logger


def check_context_window(value: object) -> int | None:
    """``value`` as a context window (a positive int) or None; anything else is refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"context_window must be a positive int or None, got {value!r}")
    if value <= 0:
        raise ValueError(f"context_window must be a positive int or None, got {value!r}")
    return value


def tokens_of(event: Any) -> int | None:
    """The tokens one model call used (prompt and reply), from ADK's ``usage_metadata``."""
    usage = getattr(event, "usage_metadata", None)
    if usage is None:
        return None
    total = getattr(usage, "total_token_count", None)
    if isinstance(total, int) and total > 0:
        return total
    parts = [
        getattr(usage, "prompt_token_count", None),
        getattr(usage, "candidates_token_count", None),
    ]
    found = [p for p in parts if isinstance(p, int)]
    return sum(found) if found else None


async def report_usage(
    host: Any,
    store: MemoryService,
    session_id: str,
    platform: str | None,
    *,
    used: int | None,
    context_window: int | None,
) -> CompressionUsage | None:
    """Emit ``token_usage`` for ``session_id``: the model's figures when both ``used`` and
    ``context_window`` are known, the message count in every case. Returns what was sent
    (None when the store can count nothing, or failed to: a turn never fails for
    a usage report, the failure is logged)."""
    try:
        if used is not None and context_window is not None:
            history = [m for m in await store.get_history(session_id, math.inf) if not m.is_control]
            usage = CompressionUsage(
                used=used,
                context_window=context_window,
                token_budget=context_window,
                compressible=sum(estimate_message_tokens(m) for m in history[:-1]),
                history_messages=len(history),
            )
        elif supports(store, FullHistory, "count_history"):
            count = int(await store.count_history(session_id))
            # No window: a line of 0.7 tokens that nothing reported can cross (used is 0).
            usage = CompressionUsage(
                used=0, context_window=1, token_budget=1, compressible=0, history_messages=count
            )
        else:
            return None
    except Exception as exc:
        get_logger("usage").warning(
            "token usage not reported", session_id=session_id, error=str(exc)
        )
        return None
    await host.emit("token_usage", session_id=session_id, platform=platform, usage=usage)
    return usage


__all__ = ["check_context_window", "report_usage", "tokens_of"]
