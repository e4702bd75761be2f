"""Which facts a prompt shows first: the ones sharing words with the question.

A question "where do I live?" shares nothing with "city: Lyon", so a few attribute hints map
question words to attributes; everything else keeps its order (newest first), so a block cut
by a budget loses the oldest facts, not the relevant ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aalis_api_relation._types import Fact

#: Question words that point at an attribute (English and Chinese).
HINTS: dict[str, tuple[str, ...]] = {
    "city": ("live", "living", "city", "move", "moved", "where", "住", "城市", "搬"),
    "employer": ("work", "job", "company", "employer", "工作", "公司", "上班"),
    "job": ("work", "job", "profession", "工作", "职业"),
    "name": ("name", "called", "名字", "叫"),
    "pet": ("pet", "dog", "cat", "宠物", "狗", "猫"),
    "diet": ("eat", "food", "diet", "vegetarian", "吃", "素"),
    "allergy": ("allergic", "allergy", "eat", "food", "过敏", "吃"),
    "birthday": ("birthday", "born", "生日"),
    "family": ("family", "sister", "brother", "wife", "husband", "家人"),
    "likes": ("like", "love", "favourite", "favorite", "喜欢"),
    "plan": ("plan", "planning", "trip", "next", "打算", "计划"),
}


def _terms(text: str) -> set[str]:
    words = set(re.findall(r"[a-z0-9]+", text.casefold()))
    words |= set(re.findall(r"[\u4e00-\u9fff]", text))
    return words


def score(fact: Fact, query: str) -> int:
    terms = _terms(query)
    found = len(terms & _terms(f"{fact.attribute} {fact.value}"))
    hints = HINTS.get(fact.attribute, ())
    found += sum(2 for hint in hints if hint in terms or (len(hint) == 1 and hint in query))
    return found


def rank(facts: Sequence[Fact], query: str | None, limit: int | None) -> list[Fact]:
    """``facts`` newest first, those relevant to ``query`` before the rest, cut at
    ``limit`` (None: all; a negative or non-int limit is a ``ValueError``)."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
    ordered = sorted(facts, key=lambda f: (f.valid_from, f.id), reverse=True)
    if query:
        ordered.sort(key=lambda f: score(f, query), reverse=True)
    return ordered if limit is None else ordered[:limit]


__all__ = ["HINTS", "rank", "score"]
