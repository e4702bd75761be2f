"""``FactService``: the plugin's ``RelationService`` (what ``relation`` provides).

Reads go to the store every time (no cache to go stale when ``aalis facts edit`` runs in
another process); writes take the deriver's lock, so an edit never interleaves with a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from aalis_api_relation import Fact, FactNotFound, PersonRef, rank, retract

from aalis_plugin_user_relation._config import UserRelationConfig, scope_of
from aalis_plugin_user_relation._deriver import Deriver, new_id
from aalis_plugin_user_relation._store import FactStore


class FactService:
    def __init__(
        self, *, store: FactStore, deriver: Deriver, config: UserRelationConfig, logger: Any
    ) -> None:
        self._store = store
        self._deriver = deriver
        self._config = config
        self._logger = logger

    @property
    def scope(self) -> str:
        return scope_of(self._config.recall_scope, self._logger)

    async def facts(self, person: object, *, include_superseded: bool = False) -> list[Fact]:
        who = PersonRef.of(person)
        found = [f for f in await self._store.of(who) if include_superseded or f.current]
        return sorted(found, key=lambda f: (f.valid_from, f.id))

    async def about(
        self,
        session_id: str,
        query: str | None = None,
        *,
        limit: int | None = None,
        persons: Sequence[PersonRef] = (),
    ) -> list[Fact]:
        """The current facts about the people of ``session_id`` (those who stated a fact in
        it, and ``persons``), as ``recall_scope`` allows: ``session`` shows what was said
        in this session; ``all`` what they said anywhere, unless the session has more than
        one person (a group sees only itself: private by default, docs/host/privacy.md)."""
        if not isinstance(session_id, str):
            raise TypeError("session_id must be a str")
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
        current = [f for f in await self._store.all() if f.current]
        people = {f.person for f in current if session_id in f.sessions} | set(persons)
        # Everyone who ever spoke here counts, even without a fact: one of them makes a group.
        speakers = self._deriver.speakers.get(session_id, set())
        if self.scope == "all" and len({str(p) for p in people} | speakers) == 1:
            found = [f for f in current if f.person in people]
        else:
            found = [f for f in current if f.person in people and session_id in f.sessions]
        return rank(found, query, limit)

    async def forget(self, person: object) -> int:
        who = PersonRef.of(person)
        async with self._deriver.lock:
            doomed = await self._store.of(who)
            await self._store.write([], doomed)
        return len(doomed)

    async def get(self, fact_id: str) -> Fact:
        fact = await self._store.get(fact_id)
        if fact is None:
            raise FactNotFound(fact_id)
        return fact

    async def history(self, fact_id: str) -> list[Fact]:
        """The facts of the same person and attribute chained to ``fact_id`` by
        supersession, oldest first."""
        fact = await self.get(fact_id)
        theirs = {f.id: f for f in await self._store.of(fact.person)}
        chain = [fact]
        before = {f.superseded_by: f for f in theirs.values() if f.superseded_by}
        while chain[0].id in before and before[chain[0].id] not in chain:
            chain.insert(0, before[chain[0].id])
        while chain[-1].superseded_by in theirs and theirs[chain[-1].superseded_by] not in chain:
            chain.append(theirs[chain[-1].superseded_by])
        return chain

    async def retract(self, fact_id: str) -> None:
        async with self._deriver.lock:
            facts = await self._store.all()
            if not any(f.id == fact_id for f in facts):
                raise FactNotFound(fact_id)
            removal = retract(facts, [fact_id])
            await self._store.write(removal.changed, removal.deleted)

    async def edit(self, fact_id: str, value: str, *, at: int) -> Fact:
        """The user says the value is ``value``: a new fact (extractor ``user``, no source
        message) supersedes ``fact_id``, which is kept."""
        if not isinstance(value, str) or not value.strip():
            raise ValueError("a fact's new value must be a non-empty string")
        async with self._deriver.lock:
            old = await self._store.get(fact_id)
            if old is None:
                raise FactNotFound(fact_id)
            if not old.current:
                raise ValueError(f"fact {fact_id} is superseded; edit the current one")
            new = Fact(
                id=new_id(),
                person=old.person,
                attribute=old.attribute,
                value=value.strip(),
                text=f"edited by the user (was: {old.value})",
                valid_from=max(at, old.valid_from),
                confidence=1.0,
                extractor="user",
                sessions=old.sessions,
            )
            replaced = attrs.evolve(old, superseded_at=new.valid_from, superseded_by=new.id)
            await self._store.write([replaced, new])
        return new


__all__ = ["FactService"]
