"""How an exception reads in this plugin's log fields and ``CompressionError`` messages.

One line, the type first: a compression's failure is reported in a log line and in the
``aalis compress`` output, where a multi-line message or a bare text without its type
would not say what failed.
"""

from __future__ import annotations


def error_text(exc: BaseException) -> str:
    """``Type: message`` on one line (just ``Type`` when the message is empty)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = ["error_text"]
