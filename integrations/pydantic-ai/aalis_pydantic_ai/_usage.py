"""The tokens a model call used, as the framework records them.

Pydantic AI puts the token figures of each model call on its ``ModelResponse``
(``usage``, a ``RequestUsage``); ``aalis_agent.report_usage`` turns them and
the model's window (``context_window=``) into the ``token_usage`` event
(docs/compression.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def tokens_of(messages: Sequence[Any]) -> int | None:
    """The tokens the newest model call used (its input and output), from the newest
    ``ModelResponse`` among ``messages``; None when none reports any."""
    for message in reversed(messages):
        usage = getattr(message, "usage", None)
        if getattr(message, "kind", None) != "response" or usage is None:
            continue
        total = int(getattr(usage, "input_tokens", 0) or 0) + int(
            getattr(usage, "output_tokens", 0) or 0
        )
        return total or None
    return None


__all__ = ["tokens_of"]
