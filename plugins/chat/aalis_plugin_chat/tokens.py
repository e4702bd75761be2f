"""The token estimate of SPEC §7.3, for the ``token_usage`` figures this chat reports.

The chat cannot import memory-summary (plugins never depend on each other), and it must
report figures even when no compression provider is installed, so it carries the same rule:
about 1.5 per CJK character, ``ceil(len / 3.5)`` per run of other characters, +4 per message.
"""

from __future__ import annotations

import math

from aalis_schema_message import Message

_CJK_RANGES = (
    (0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3100, 0x312F),
    (0x3130, 0x318F), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x2FA1F),
)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def estimate_text(text: str) -> int:
    cjk = 0
    total = 0
    run = 0
    for char in text:
        if _is_cjk(char):
            cjk += 1
            if run:
                total += math.ceil(run / 3.5)
                run = 0
        else:
            run += 1
    if run:
        total += math.ceil(run / 3.5)
    return total + math.ceil(cjk * 1.5)


def estimate_message(message: Message) -> int:
    text = message.content or ""
    for call in message.tool_calls or ():
        text += f" {call.name} {call.arguments}"
    return estimate_text(text) + 4


__all__ = ["estimate_message", "estimate_text"]
