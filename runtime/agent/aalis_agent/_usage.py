"""How full a session is, told to the compression provider (the ``token_usage`` event).

memory-summary compresses a session by itself when an agent reports, after a model call,
that the session crossed one of its lines (docs/compression.md): the token line (a share of
the model's context window) or the count line (``history_limit`` messages). ``run_turn``
reports from the prompt it built; a framework adapter reports from what its framework hands
it (ADK's ``usage_metadata``, Pydantic AI's ``RequestUsage``) or, when the framework hands the
store nothing, the message count alone. A token figure without the model's window would
cross any line, so a report carries tokens only when both are known.
"""

from __future__ import annotations

import math
from typing import Any

from aalis_api_memory import CompressionUsage, FullHistory, MemoryService, supports

from aalis_agent._tokens import estimate_message_tokens
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
    a usage report, the failure is logged; None too when no plugin listens, so a host
    without a compression provider pays no count per save)."""
    if not _listened(host):
        return None
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
    try:
        await host.emit("token_usage", session_id=session_id, platform=platform, usage=usage)
    except ValueError:  # no loaded contract declares the event: nobody listens
        return None
    return usage


def _listened(host: Any) -> bool:
    """True unless the host can say that no plugin implements ``token_usage``."""
    hook_impls = getattr(host, "hook_impls", None)
    if hook_impls is None:
        return True
    try:
        return bool(hook_impls("token_usage"))
    except ValueError:  # no loaded contract declares the event
        return False


__all__ = ["check_context_window", "report_usage"]
