"""``InMemoryRelation``: the reference ``RelationService``, facts in a dict.

It takes statements (``tell``) instead of reading messages, so it shows the contract's rules
with no extractor in the way; the conformance kit runs on it, and tests of consumers use it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from aalis_api_relation._consolidation import Statement, consolidate, drop_sources, retract
from aalis_api_relation._errors import FactNotFound
from aalis_api_relation._ranking import rank
from aalis_api_relation._types import Fact, PersonRef


class InMemoryRelation:
    def __init__(self) -> None:
        self._facts: dict[str, Fact] = {}
        self._ids = itertools.count(1)

    def _new_id(self) -> str:
        return f"f{next(self._ids)}"

    def _apply(self, changed: Iterable[Fact], deleted: Iterable[Fact] = ()) -> None:
        for fact in deleted:
            self._facts.pop(fact.id, None)
        for fact in changed:
            self._facts[fact.id] = fact

    async def tell(self, statement: Statement) -> list[Fact]:
        """Consolidate one statement; returns the facts written."""
        changed = consolidate(list(self._facts.values()), statement, self._new_id)
        self._apply(changed)
        return changed

    async def messages_deleted(self, message_ids: Iterable[str]) -> None:
        removal = drop_sources(list(self._facts.values()), message_ids)
        self._apply(removal.changed, removal.deleted)

    async def facts(self, person: object, *, include_superseded: bool = False) -> list[Fact]:
        who = PersonRef.of(person)
        found = [
            f for f in self._facts.values() if f.person == who and (include_superseded or f.current)
        ]
        return sorted(found, key=lambda f: (f.valid_from, f.id))

    async def about(
        self, session_id: str, query: str | None = None, *, limit: int | None = None
    ) -> list[Fact]:
        if not isinstance(session_id, str):
            raise TypeError("session_id must be a str")
        # The reference's scope is the session: what was said in it.
        found = [f for f in self._facts.values() if f.current and session_id in f.sessions]
        return rank(found, query, limit)

    async def forget(self, person: object) -> int:
        who = PersonRef.of(person)
        doomed = [i for i, f in self._facts.items() if f.person == who]
        for fact_id in doomed:
            del self._facts[fact_id]
        return len(doomed)

    async def retract(self, fact_id: str) -> None:
        if fact_id not in self._facts:
            raise FactNotFound(fact_id)
        removal = retract(list(self._facts.values()), [fact_id])
        self._apply(removal.changed, removal.deleted)


__all__ = ["InMemoryRelation"]
