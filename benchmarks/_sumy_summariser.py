"""LexRank and TextRank from ``sumy`` as offline summarisers, for comparison only.

Measured by ``summary_quality.py`` when ``sumy`` and ``numpy`` are installed (they are not
project dependencies: docs/compression.md says why). Everything but the ranking is shared with
memory-summary's extractive summariser, so the comparison is of the ranking alone:

- the same sentences (memory-summary's splitter: sumy's English splitter needs NLTK's
  ``punkt_tab`` data, downloaded from the network at run time, and its Chinese one needs
  ``jieba``);
- the same words (memory-summary's units: content words and CJK character pairs);
- the same budget (``budget_for``), filled in the ranking's order, and the same output format,
  so a previous summary is read back the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

NAMES = ("lexrank", "textrank")


def available() -> str | None:
    """None when sumy's rankers can run here, else why not."""
    try:
        import numpy  # noqa: F401
        import sumy  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install sumy numpy)"
    return None


class _Units:
    """sumy's tokenizer protocol (``to_words``), answered with memory-summary's units."""

    language = "any"

    def to_words(self, text: str) -> list[str]:
        from aalis_plugin_memory_summary._extractive import units_of

        return sorted(units_of(text))


def summariser(name: str) -> Callable[[str | None, Sequence[tuple[str, str]]], str]:
    from aalis_agent import estimate_text_tokens
    from aalis_plugin_memory_summary import _extractive as extractive
    from sumy.models.dom import ObjectDocumentModel, Paragraph, Sentence
    from sumy.summarizers.lex_rank import LexRankSummarizer
    from sumy.summarizers.text_rank import TextRankSummarizer

    ranker = LexRankSummarizer() if name == "lexrank" else TextRankSummarizer()
    tokenizer = _Units()

    def summarise(previous: str | None, items: Sequence[tuple[str, str]]) -> str:
        sources: list[tuple[str, str, bool]] = []
        if previous and previous.strip():
            sources.extend((r, t, True) for r, t in extractive._previous_items(previous))
        sources.extend((r, t, False) for r, t in items)
        pieces: list[tuple[str, str, int]] = []
        total = user = carried = 0
        for role, text, old in sources:
            for piece in extractive.split_sentences(text):
                cost = estimate_text_tokens(piece)
                pieces.append((role, piece, cost + extractive.LINE_OVERHEAD))
                if old:
                    carried += cost + extractive.LINE_OVERHEAD
                else:
                    total += cost
                    user += cost if role == "user" else 0
        if not pieces:
            return ""
        budget = extractive.budget_for(total, user, carried)
        document = ObjectDocumentModel(
            [Paragraph([Sentence(text, tokenizer) for _, text, _ in pieces])]
        )
        chosen: list[int] = []

        def fill(ranked: Sequence[Any]) -> list[Any]:
            left = budget
            taken = []
            seen: set[str] = set()
            for info in ranked:  # best first
                _, text, cost = pieces[info.order]
                if cost > left or text.casefold() in seen:
                    continue
                seen.add(text.casefold())
                taken.append(info)
                chosen.append(info.order)
                left -= cost
            return taken or list(ranked[:1])

        ranker(document, fill)
        if not chosen:
            chosen.append(0)
        body = "\n".join(f"- {pieces[i][0]}: {pieces[i][1]}" for i in sorted(set(chosen)))
        return f"{extractive.HEADER}\n{body}"

    return summarise


__all__ = ["NAMES", "available", "summariser"]
