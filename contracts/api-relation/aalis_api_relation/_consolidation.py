"""Consolidation: how one new statement changes the facts already known.

The rules every provider follows (docs/host/facts.md, "Consolidation"), pure functions so the
in-memory reference and the plugin apply the same ones:

* the same value said again merges its source into the current fact (no duplicate);
* a new value of a single-valued attribute (``city``) supersedes the current one: the old
  fact is kept with ``superseded_at`` and ``superseded_by``, never deleted;
* a statement older than the current value (a backfilled message) is kept as history,
  already superseded by the newer value, instead of turning the clock back;
* a correction ("actually the 14th, not the 4th") supersedes the current fact whose value
  holds the corrected words, with those words replaced;
* "I like X" and "I dislike X" supersede each other;
* removing a fact (retracting it, or deleting every message it came from) makes the fact it
  had superseded current again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import attrs

from aalis_api_relation._types import Fact, PersonRef, is_single_valued

#: Attributes whose values contradict each other's: liking X ends disliking X.
OPPOSITES = {"likes": "dislikes", "dislikes": "likes"}


@attrs.frozen(kw_only=True)
class Statement:
    """What an extractor read in one message: ``person`` says ``attribute`` is ``value``.

    ``corrects`` is set for a correction: the words of an earlier value being corrected
    (``value`` then holds the words replacing them, and ``attribute`` may be ``"*"``: any
    attribute whose current value holds those words).
    """

    person: PersonRef
    attribute: str
    value: str
    text: str
    at: int
    source: str | None = None
    session_id: str | None = None
    extractor: str = "offline"
    confidence: float = 0.8
    corrects: str | None = None


def norm(value: str) -> str:
    """The form two values are compared in: case, spaces and a leading article ignored."""
    text = " ".join(value.casefold().split())
    return re.sub(r"^(the|a|an) ", "", text)


def _words(needle: str) -> re.Pattern[str]:
    escaped = re.escape(norm(needle))
    # Word boundaries only where the needle starts or ends with a word character, and not
    # for CJK text (no spaces between words).
    start = r"(?<!\w)" if re.match(r"[A-Za-z0-9]", escaped) else ""
    end = r"(?!\w)" if re.search(r"[A-Za-z0-9]$", escaped) else ""
    return re.compile(start + escaped + end, re.IGNORECASE)


def _with_source(fact: Fact, statement: Statement) -> Fact:
    sources = fact.sources + ((statement.source,) if statement.source else ())
    sessions = fact.sessions + ((statement.session_id,) if statement.session_id else ())
    return attrs.evolve(fact, sources=sources, sessions=sessions)


def _new(statement: Statement, new_id: Callable[[], str], value: str | None = None) -> Fact:
    return Fact(
        id=new_id(),
        person=statement.person,
        attribute=statement.attribute,
        value=value if value is not None else statement.value,
        text=statement.text,
        valid_from=statement.at,
        sources=(statement.source,) if statement.source else (),
        confidence=statement.confidence,
        extractor=statement.extractor,
        sessions=(statement.session_id,) if statement.session_id else (),
    )


def consolidate(
    facts: Sequence[Fact], statement: Statement, new_id: Callable[[], str]
) -> list[Fact]:
    """The facts to write after ``statement`` (changed ones and new ones; empty when the
    statement adds nothing). ``facts`` are the known facts of ``statement.person`` (others
    are ignored). Nothing is ever returned for deletion."""
    mine = [f for f in facts if f.person == statement.person]
    if statement.source and any(
        statement.source in f.sources and f.attribute == statement.attribute for f in mine
    ):
        return []  # this message was read before (a backfill, a replay)
    if statement.corrects is not None:
        return _correct(mine, statement, new_id)
    value = norm(statement.value)
    same = [f for f in mine if f.attribute == statement.attribute]
    for fact in same:
        if fact.current and norm(fact.value) == value:
            return [_with_source(fact, statement)]
    current = [f for f in same if f.current]
    opposite = OPPOSITES.get(statement.attribute)
    if opposite is not None:
        current = [
            f for f in mine if f.current and f.attribute == opposite and norm(f.value) == value
        ]
    elif not is_single_valued(statement.attribute):
        current = []
    if not current:
        return [_new(statement, new_id)]
    newest = max(current, key=lambda f: f.valid_from)
    if statement.at < newest.valid_from:
        # Said before the value now current (read late): history, not news.
        fact = _new(statement, new_id)
        return [attrs.evolve(fact, superseded_at=newest.valid_from, superseded_by=newest.id)]
    fact = _new(statement, new_id)
    replaced = [attrs.evolve(f, superseded_at=statement.at, superseded_by=fact.id) for f in current]
    return [*replaced, fact]


def _correct(mine: Sequence[Fact], statement: Statement, new_id: Callable[[], str]) -> list[Fact]:
    assert statement.corrects is not None
    pattern = _words(statement.corrects)
    candidates = [
        f
        for f in mine
        if f.current
        and f.valid_from <= statement.at
        and (statement.attribute in ("*", f.attribute))
        and pattern.search(norm(f.value))
    ]
    if not candidates:
        return []
    target = max(candidates, key=lambda f: f.valid_from)
    value = pattern.sub(statement.value, target.value, count=1)
    if norm(value) == norm(target.value):
        return []
    fact = _new(attrs.evolve(statement, attribute=target.attribute), new_id, value)
    old = attrs.evolve(target, superseded_at=statement.at, superseded_by=fact.id)
    return [old, fact]


@attrs.frozen
class Removal:
    """What removing facts changes: the facts deleted and the facts rewritten (sources
    shrunk, or made current again because what superseded them is gone)."""

    deleted: tuple[Fact, ...] = ()
    changed: tuple[Fact, ...] = ()


def retract(facts: Sequence[Fact], doomed: Iterable[str]) -> Removal:
    """Remove the facts whose ids are ``doomed``; a fact they superseded takes their place
    (current again when a doomed one was current, else superseded by its successor)."""
    gone = set(doomed)
    by_id = {f.id: f for f in facts}
    deleted = tuple(by_id[i] for i in gone if i in by_id)
    changed: dict[str, Fact] = {}
    for fact in facts:
        if fact.id in gone or fact.superseded_by not in gone:
            continue
        successor: Fact | None = by_id.get(fact.superseded_by or "")
        # Follow the chain past every doomed fact to the first that stays.
        while successor is not None and successor.id in gone:
            successor = by_id.get(successor.superseded_by or "")
        if successor is None:
            changed[fact.id] = attrs.evolve(fact, superseded_at=None, superseded_by=None)
        else:
            changed[fact.id] = attrs.evolve(fact, superseded_by=successor.id)
    return Removal(deleted, tuple(changed.values()))


def drop_sources(facts: Sequence[Fact], message_ids: Iterable[str]) -> Removal:
    """The messages ``message_ids`` are gone: they leave every fact's sources, and a fact
    left with no source at all is retracted (a fact never had to have sources: an edit by
    the user has none and stays)."""
    ids = set(message_ids)
    emptied: list[str] = []
    shrunk: dict[str, Fact] = {}
    for fact in facts:
        if not ids.intersection(fact.sources):
            continue
        left = tuple(s for s in fact.sources if s not in ids)
        if left:
            shrunk[fact.id] = attrs.evolve(fact, sources=left)
        else:
            emptied.append(fact.id)
    removal = retract([shrunk.get(f.id, f) for f in facts], emptied)
    changed = {f.id: f for f in shrunk.values() if f.id not in emptied}
    changed.update({f.id: f for f in removal.changed})
    return Removal(removal.deleted, tuple(changed.values()))


__all__ = ["OPPOSITES", "Removal", "Statement", "consolidate", "drop_sources", "norm", "retract"]
