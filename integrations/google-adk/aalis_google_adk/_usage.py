"""The tokens a model call used, as the framework records them.

ADK puts the model's token figures on each event it produced (``usage_metadata``);
``aalis_agent.report_usage`` turns them and the model's window (``context_window=``) into
the ``token_usage`` event (docs/compression.md).
"""

from __future__ import annotations

from typing import Any


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


__all__ = ["tokens_of"]
