"""A token estimate that needs no tokenizer (docs/compression.md).

It lives in the contract because two sides must agree on it without depending on each other:
an agent (the chat plugin) reports ``token_usage`` figures with it, and the compression
provider (memory-summary) sizes its keep caps and prompts with it. Compression decisions (the keep caps, the prompt budget) only need the right order of
magnitude, and a real tokenizer would tie the plugin to one model family. The rule
(docs/compression.md):
about 1.5 tokens per CJK character (CJK text has no spaces and tokenizers split it finely),
``ceil(len / 3.5)`` per run of other characters, and 4 per message for the role and framing.
"""

from __future__ import annotations

import functools
import math
import re

from aalis_schema_message import Message

#: Tokens added per message for role, separators and framing.
MESSAGE_OVERHEAD = 4
CJK_WEIGHT = 1.5
OTHER_CHARS_PER_TOKEN = 3.5

# Unified ideographs and extensions, compatibility ideographs, kana, hangul, CJK symbols and
# punctuation, and full-width forms: the scripts tokenizers split about one token per char.
_CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFFEF),  # half-width and full-width forms
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges)


# The estimate runs over every message of a session on each compression and over every
# prompt of a chat turn: one compiled character class scans a text in C, where testing each
# character against the ranges in Python cost about 1 µs per character (most of the cost of
# compressing a long session).


@functools.cache
def _cjk_run() -> re.Pattern[str]:
    """A run of CJK characters; compiled at first use (the class takes milliseconds to
    compile, and most processes that import the agent never count a token)."""
    return re.compile(f"[{_char_class(_CJK_RANGES)}]+")


def is_cjk(char: str) -> bool:
    return _cjk_run().match(char) is not None


def estimate_text_tokens(text: str) -> int:
    """Tokens of ``text`` alone (no message overhead)."""
    if not text:
        return 0
    cjk = 0
    total = 0
    start = 0
    for match in _cjk_run().finditer(text):
        if match.start() > start:
            total += math.ceil((match.start() - start) / OTHER_CHARS_PER_TOKEN)
        cjk += match.end() - match.start()
        start = match.end()
    if start < len(text):
        total += math.ceil((len(text) - start) / OTHER_CHARS_PER_TOKEN)
    return total + math.ceil(cjk * CJK_WEIGHT)


def model_text(message: Message) -> str:
    """What of ``message`` a model reads: the content and any tool calls."""
    parts = [message.content or ""]
    for call in message.tool_calls or ():
        parts.append(call.name)
        parts.append(call.arguments)
    return " ".join(part for part in parts if part)


def estimate_message_tokens(message: Message) -> int:
    """Tokens of one message as a model sees it, framing included."""
    return estimate_text_tokens(model_text(message)) + MESSAGE_OVERHEAD


__all__ = [
    "MESSAGE_OVERHEAD",
    "estimate_message_tokens",
    "estimate_text_tokens",
    "is_cjk",
    "model_text",
]
