# ruff: noqa: RUF001 - the rules read full-width punctuation
"""The offline extractor: sentences in, drafts out, no model and no network.

Labelled ``offline`` on every fact it produces. English and Chinese rules run on every
sentence (a sentence mixing both is read by both); see docs/host/facts.md for what it
reads and what it leaves alone.
"""

from __future__ import annotations

import re

from aalis_plugin_user_relation._drafts import Draft
from aalis_plugin_user_relation._extract_en import extract_en
from aalis_plugin_user_relation._extract_zh import extract_zh

EXTRACTOR = "offline"
#: Confidence given to a rule's reading.
CONFIDENCE = 0.7
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: Longer messages are read up to here (a pasted document is not a self-statement).
MAX_CHARS = 4000


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text[:MAX_CHARS]) if s and s.strip()]


def extract(text: str) -> list[Draft]:
    """Every draft in ``text``, in the order said (a correction after what it corrects)."""
    drafts: list[Draft] = []
    for sentence in sentences(text):
        if _CJK.search(sentence):
            drafts += extract_zh(sentence)
        if re.search(r"[A-Za-z]", sentence):
            drafts += extract_en(sentence)
    return drafts


__all__ = ["CONFIDENCE", "EXTRACTOR", "extract", "sentences"]
