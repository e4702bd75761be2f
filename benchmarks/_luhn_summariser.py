"""The offline summariser memory-summary shipped before the fact-keeping one (comparison only).

Vendored from ``plugins/memory-summary/aalis_plugin_memory_summary/extractive.py`` at commit
d41b1e5404ee82f71150b2a315861712a3b2ced5 (code unchanged, this paragraph added) so that
``benchmarks/summary_quality.py`` measures the old and the new summariser side by side in one
run. No plugin uses it. Its own description follows.

The built-in offline summariser: extractive, deterministic, no model.

It picks the sentences that carry the conversation's most frequent content words, the way
classic frequency summarisers do (Luhn, 1958), with small bonuses for position:

1. Sentences: each message's text is split at sentence ends (``. ! ?`` followed by space;
   the CJK full stop, exclamation and question marks U+3002, U+FF01, U+FF1F) and at line
   breaks; a sentence is cut to 300 characters.
2. Words: Latin-script words of 2+ letters and numbers, lower-cased, minus a short English
   stop-word list; CJK text (no spaces) counts as overlapping character pairs.
3. Word weight: its count in the whole input divided by the highest count.
4. Sentence score: the sum of its distinct words' weights divided by the square root of their
   number (so long sentences do not win by length alone), multiplied by
   ``1 + bonuses``: +0.25 for the first sentence of a message, +0.3 for a sentence of the
   previous summary (summaries are cumulative, older context should survive), and up to
   +0.15 growing with the message's position in the span (later is more current).
5. Selection: highest score first (ties: earlier sentence), skipping duplicates and
   sentences that no longer fit or score below half of the best sentence (so leftover room
   is not filled with small talk), within a budget of a quarter of the input's estimated
   tokens, at least 120 and at most 600. When there is a previous summary, the new messages
   choose first within half of the budget (so a long-lived summary cannot crowd out what was
   just said), then the best remaining sentences of both fill the rest. At least one
   sentence is always chosen. The chosen sentences are printed in their original order
   (previous summary first), each with the role that said it.

The output's first line says that it is an extractive summary, so nobody mistakes it for a
model's; ``SummaryRecord.model`` is ``"extractive"``. Nothing is kept verbatim (keep = []).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import attrs
from aalis_agent import estimate_text_tokens, is_cjk

EXTRACTIVE_ID = "extractive"
HEADER = (
    "[Extractive summary: key sentences selected offline by word frequency; no model wrote it.]"
)
SENTENCE_CHARS = 300
MIN_BUDGET = 120
MAX_BUDGET = 600

FIRST_SENTENCE_BONUS = 0.25
PREVIOUS_SUMMARY_BONUS = 0.3
RECENCY_BONUS = 0.15
RELATIVE_FLOOR = 0.5

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yes",
        "ok",
        "okay",
        "also",
        "about",
        "again",
        "all",
        "any",
        "because",
        "before",
        "after",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "let",
        "lets",
        "us",
        "am",
        "shall",
        "may",
        "might",
        "must",
    ]
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])|\n+")
_WORD = re.compile(r"\w+")
_LINE = re.compile(r"- ([^:]{1,40}): (.*)\Z")


@attrs.frozen
class _Sentence:
    order: int
    role: str
    text: str
    words: frozenset[str]
    bonus: float


def _words(text: str) -> list[str]:
    out: list[str] = []
    for match in _WORD.finditer(text.lower()):
        token = match.group(0)
        if any(is_cjk(c) for c in token):
            run = [c for c in token if is_cjk(c)]
            out.extend("".join(run[i : i + 2]) for i in range(max(1, len(run) - 1)))
            rest = "".join(c if not is_cjk(c) else " " for c in token).split()
            out.extend(r for r in rest if len(r) >= 2 and r not in STOP_WORDS)
        elif token.isdigit() or (len(token) >= 2 and token not in STOP_WORDS):
            out.append(token)
    return out


def split_sentences(text: str) -> list[str]:
    sentences = []
    for piece in _SENTENCE_END.split(text):
        piece = " ".join(piece.split())
        if not piece:
            continue
        if len(piece) > SENTENCE_CHARS:
            piece = piece[: SENTENCE_CHARS - 3].rstrip() + "..."
        sentences.append(piece)
    return sentences


def _previous_items(previous: str) -> list[tuple[str, str]]:
    """A previous summary as (role, text) items; our own format is read back line by line."""
    lines = previous.strip().splitlines()
    if lines and lines[0].strip() == HEADER:
        items = []
        for line in lines[1:]:
            match = _LINE.match(line.strip())
            if match:
                items.append((match.group(1), match.group(2)))
            elif line.strip():
                items.append(("summary", line.strip()))
        return items
    return [("summary", previous)]


def summarise(previous: str | None, items: Sequence[tuple[str, str]]) -> str:
    """An extractive summary of ``items`` (role, text) merged with ``previous``."""
    sentences: list[_Sentence] = []
    order = 0
    sources: list[tuple[str, str, float, bool]] = []
    if previous and previous.strip():
        sources.extend(
            (role, text, PREVIOUS_SUMMARY_BONUS, False) for role, text in _previous_items(previous)
        )
    count = len(items)
    for index, (role, text) in enumerate(items):
        recency = RECENCY_BONUS * ((index + 1) / count) if count else 0.0
        sources.append((role, text, recency, True))
    source_tokens = 0
    fresh: set[int] = set()
    for role, text, base_bonus, is_new in sources:
        for number, piece in enumerate(split_sentences(text)):
            bonus = base_bonus + (FIRST_SENTENCE_BONUS if number == 0 else 0.0)
            sentences.append(_Sentence(order, role, piece, frozenset(_words(piece)), bonus))
            source_tokens += estimate_text_tokens(piece)
            if is_new:
                fresh.add(order)
            order += 1
    if not sentences:
        return ""

    counts: Counter[str] = Counter()
    for sentence in sentences:
        counts.update(_words(sentence.text))
    top = max(counts.values(), default=1)

    def score(sentence: _Sentence) -> float:
        if not sentence.words:
            return 0.0
        weight = sum(counts[w] / top for w in sentence.words) / math.sqrt(len(sentence.words))
        return weight * (1.0 + sentence.bonus)

    budget = min(MAX_BUDGET, max(MIN_BUDGET, source_tokens // 4))
    ranked = sorted(sentences, key=lambda s: (-score(s), s.order))
    chosen: list[_Sentence] = []
    seen: set[str] = set()
    used = 0

    floor = RELATIVE_FLOOR * score(ranked[0])

    def fill(candidates: list[_Sentence], limit: int) -> None:
        nonlocal used
        for sentence in candidates:
            key = sentence.text.casefold()
            if key in seen or (chosen and score(sentence) < floor):
                continue
            tokens = estimate_text_tokens(sentence.text) + 2
            if chosen and used + tokens > limit:
                continue
            chosen.append(sentence)
            seen.add(key)
            used += tokens

    if len(fresh) < len(sentences):  # a previous summary exists: new messages choose first
        fill([s for s in ranked if s.order in fresh], budget // 2)
    fill(ranked, budget)
    chosen.sort(key=lambda s: s.order)
    body = "\n".join(f"- {s.role}: {s.text}" for s in chosen)
    return f"{HEADER}\n{body}"


__all__ = ["EXTRACTIVE_ID", "HEADER", "STOP_WORDS", "split_sentences", "summarise"]
