# ruff: noqa: RUF001 - the rules read full-width punctuation
"""What an extractor reads in a sentence, before it is anyone's fact: a ``Draft``."""

from __future__ import annotations

import re
from collections.abc import Iterator

import attrs


@attrs.frozen
class Draft:
    """``attribute`` is ``value``; ``corrects`` set for a correction of an earlier value
    (``attribute`` is then ``"*"``: whichever attribute holds the corrected words)."""

    attribute: str
    value: str
    corrects: str | None = None


_TRAILING = re.compile(
    r"(?i:\s+(?:now|these days|nowadays|anymore|any more|too|as well|again|at the moment|"
    r"right now|for now|since|recently|lately|last \w+|this \w+|next \w+|with \w+.*|"
    r"and .*|but .*|because .*|so .*|which .*|where .*|who .*|though|though .*|"
    r"instead|actually|a lot|very much|so much))+$"
)
_CJK_TRAILING = re.compile(r"[了啦呢吧的啊哦呀喔嘛]+$")


def clean(value: str) -> str:
    """A value without the filler around it ("Lyon now" -> "Lyon"), at most 6 words."""
    text = " ".join(value.split()).strip(" \"'“”‘’()[]")
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING.sub("", text).strip()
        text = _CJK_TRAILING.sub("", text).strip()
    words = text.split(" ")
    return " ".join(words[:6])


class LazyPattern:
    """A regular expression compiled on first use: the extractor has dozens, and a command
    that never reads a message (``aalis plugins``) should not pay for compiling them."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self._get().search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self._get().finditer(text)


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)


__all__ = ["Draft", "LazyPattern", "clean", "lazy"]
