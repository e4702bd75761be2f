"""The prompt block "What I know about <person>": current facts, within a token budget."""

from __future__ import annotations

from collections.abc import Sequence

from aalis_agent import estimate_text_tokens
from aalis_api_relation import Fact, PersonRef


def _title(person: PersonRef, facts: Sequence[Fact]) -> str:
    names = [f.value for f in facts if f.person == person and f.attribute == "name"]
    return f"{names[0]} ({person})" if names else str(person)


def block_text(facts: Sequence[Fact], budget_tokens: int) -> str | None:
    """The block for ``facts`` (already ranked, the most relevant first), one section per
    person; facts past ``budget_tokens`` are left out. None when nothing fits."""
    if budget_tokens <= 0 or not facts:
        return None
    people: list[PersonRef] = list(dict.fromkeys(f.person for f in facts))
    used = 0
    sections: list[str] = []
    for person in people:
        header = (
            f"What I know about {_title(person, facts)} (from what they said; may be out of date):"
        )
        cost = estimate_text_tokens(header)
        if used + cost > budget_tokens:
            break
        lines: list[str] = []
        for fact in (f for f in facts if f.person == person):
            line = f"- {fact.line()}"
            line_cost = estimate_text_tokens(line) + 1
            if used + cost + line_cost > budget_tokens:
                continue
            cost += line_cost
            lines.append(line)
        if lines:
            used += cost
            sections.append("\n".join([header, *lines]))
    return "\n\n".join(sections) or None


__all__ = ["block_text"]
