# ruff: noqa: RUF001 - the rules read full-width punctuation
"""What an extractor reads in a sentence, before it is anyone's fact: a ``Draft``."""

from __future__ import annotations

import re

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


__all__ = ["Draft", "clean"]
