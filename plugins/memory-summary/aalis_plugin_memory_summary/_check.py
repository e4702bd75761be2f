# ruff: noqa: RUF001 - the phrases match typographic apostrophes and full-width punctuation
"""Is a model's summary fit to replace its span? (docs/compression.md, "A model's summary is
checked").

A compression archives the span its summary covers, so the summary is all the model sees of
those messages afterwards. A model that answers "OK.", apologises, or hands back its server's
error page would otherwise silently erase the conversation. Two checks, both cheap and
deterministic:

- **length**: the summary must hold at least ``summary_floor(carried)`` tokens, where
  ``carried`` is what it has to carry (the previous summary plus the span's texts). The floor
  grows with the span and is capped; the figures come from ``benchmarks/summary_length.py``
  (the offline summariser's summaries and the tersest facts-only summary of the benchmark
  conversations all sit well above it);
- **refusal or error text**: a summary that *starts* like an apology, a refusal, an "as an
  AI" disclaimer, an error message or an HTTP error body (English and Chinese). Only the
  start is read: a real summary may well say that the user apologised.

The extractive summariser is never checked: it is what a rejected summary falls back to
(``fallback.py``). A span summarised in several chunks is checked chunk by chunk
(``summarisers.LlmSummariser``), so a chunk answered "OK." cannot hide behind a good last one.
"""

from __future__ import annotations

import functools
import re

import attrs
from aalis_agent import estimate_text_tokens
from aalis_api_memory import AalisMemoryError

#: Below this many carried tokens there is no length floor: a span of a greeting or two can
#: honestly be summarised in a couple of words.
FLOOR_FROM_TOKENS = 60
#: The floor as a share of the carried tokens (benchmarks/summary_length.py: the lowest
#: extractive ratio is 0.16 and the lowest facts-only ratio 0.017, median 0.053).
FLOOR_RATIO = 0.01
#: At least this many tokens once a floor applies: "OK." (1 token) never carries 60 tokens.
FLOOR_MIN_TOKENS = 3
#: The floor never asks for more than this, however long the span: a dense model summary of
#: a very long conversation may be short, and that is the model's call.
FLOOR_CAP_TOKENS = 40
#: How much of the summary's start the refusal/error detector reads.
HEAD_CHARS = 200

_REFUSAL_EN = (
    r"i[' ’]?m (?:so |very |really )?sorry\b",
    r"i am (?:so |very |really )?sorry\b",
    r"sorry[,.!]",
    r"i apologi[sz]e\b",
    r"my apologies\b",
    r"unfortunately,? i (?:can|could|am|'m|was)",
    r"i (?:can[' ’]?t|cannot|can not|could not|couldn[' ’]?t|won[' ’]?t|am unable|[' ’]?m unable"
    r"|am not able|[' ’]?m not able) (?:help|assist|do|provide|summari[sz]e|comply|fulfil"
    r"|complete|process|access|answer|create|generate|write)",
    r"as an ai\b",
    r"as a (?:large )?language model\b",
    r"as an? (?:ai )?assistant,? i (?:can|cannot|can[' ’]?t|don[' ’]?t|am)",
    r"(?:error|exception|traceback|fatal)\b\s*[:(\[]",
    r"an error (?:has )?occurred\b",
    r"something went wrong\b",
    r"request failed\b",
    r"(?:http/\d(?:\.\d)?\s+)?[45]\d\d\s+(?:bad request|unauthori[sz]ed|forbidden|not found"
    r"|too many requests|internal server error|bad gateway|service unavailable"
    r"|gateway time-?out)\b",
    r"(?:bad request|unauthori[sz]ed|forbidden|too many requests|internal server error"
    r"|bad gateway|service unavailable|gateway time-?out)\b",
    r"rate limit(?:ed| exceeded| reached)?\b",
    r"<!doctype html|<html\b|<head\b|<body\b|<title\b",
    r"\{\s*\"(?:error|detail|message)\"\s*:",
    r"null\s*$|none\s*$|n/?a\s*$",
)
_REFUSAL_ZH = (
    r"(?:非常|很|十分)?抱歉",
    r"对不起",
    r"不好意思[，,]?(?:我|无法|不能)",
    r"我(?:无法|不能|没法|没有办法|不可以)(?:帮|协助|提供|总结|概括|完成|处理|回答|生成)",
    r"无法(?:总结|概括|完成|处理|提供|生成)",
    r"作为(?:一个|一名)?(?:ai|人工智能|语言模型|大语言模型|ai助手|人工智能助手)",
    r"(?:错误|出错|异常|报错)[:：]",
    r"(?:发生|出现)(?:了)?(?:错误|异常)",
    r"(?:请求|调用)(?:失败|超时)",
    r"服务(?:不可用|繁忙|暂时不可用)",
)


@functools.cache
def _refusal() -> re.Pattern[str]:
    """The refusal phrases as one pattern, compiled at the first check rather than at every
    start of the plugin (it takes milliseconds; most commands never summarise)."""
    return re.compile(
        "|".join(f"(?:{p})" for p in (*_REFUSAL_EN, *_REFUSAL_ZH)), re.IGNORECASE | re.UNICODE
    )


#: Leading decoration a model puts before its words: quotes, markdown, bullets, a label.
_DECOR = r"[\s\"'`*_#>\-•·“”‘’「」【】\[\]()]*"
_LEAD = re.compile(rf"^{_DECOR}(?:(?:summary|摘要)\s*[:：]{_DECOR})?", re.IGNORECASE)


@attrs.frozen
class Verdict:
    """``ok`` False: the summary is rejected; ``reason`` says why in a few words (it goes
    into the log line and the fallback summary's label)."""

    ok: bool
    reason: str = ""


def summary_floor(carried_tokens: int) -> int:
    """The fewest tokens a summary of ``carried_tokens`` may hold (0: no floor)."""
    if carried_tokens < FLOOR_FROM_TOKENS:
        return 0
    return min(FLOOR_CAP_TOKENS, max(FLOOR_MIN_TOKENS, round(carried_tokens * FLOOR_RATIO)))


def refusal_of(text: str) -> str | None:
    """The refusal or error phrase ``text`` starts with, or None."""
    head = _LEAD.sub("", text[:HEAD_CHARS], count=1)
    match = _refusal().match(head)
    return match.group(0).strip() if match else None


def check_summary(text: str, carried_tokens: int) -> Verdict:
    """Whether a model's ``text`` can replace a span of ``carried_tokens`` tokens."""
    stripped = text.strip()
    if not stripped:
        return Verdict(False, "empty")
    phrase = refusal_of(stripped)
    if phrase is not None:
        return Verdict(False, f"refusal or error text ({phrase!r})")
    tokens = estimate_text_tokens(stripped)
    floor = summary_floor(carried_tokens)
    if tokens < floor:
        return Verdict(
            False, f"too short ({tokens} tokens for {carried_tokens}; at least {floor} needed)"
        )
    return Verdict(True)


class SummaryRejected(AalisMemoryError):
    """A model's summary failed the check; ``reason`` says why (see ``check_summary``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


__all__ = [
    "FLOOR_CAP_TOKENS",
    "FLOOR_FROM_TOKENS",
    "FLOOR_MIN_TOKENS",
    "FLOOR_RATIO",
    "SummaryRejected",
    "Verdict",
    "check_summary",
    "refusal_of",
    "summary_floor",
]
