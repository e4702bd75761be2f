"""The rules of docs/host/facts.md as tests, run on every provider."""

from __future__ import annotations

from typing import Protocol

import pytest
from aalis_api_relation import Fact, FactNotFound, PersonRef, RelationService

ALICE = PersonRef("test", "alice")
BOB = PersonRef("test", "bob")

#: The English sentences a provider that reads messages is taught with.
SENTENCES = {
    "city": "I live in {}.",
    "likes": "I like {}.",
    "employer": "I work at {}.",
}


def sentence(attribute: str, value: str) -> str:
    """What a person says to state ``attribute`` is ``value`` (the kit's attributes only)."""
    return SENTENCES[attribute].format(value)


class Harness(Protocol):
    service: RelationService

    async def teach(self, session_id: str, person: PersonRef, attribute: str, value: str) -> str:
        """Make the service learn that ``person`` said so in ``session_id`` (later than
        anything taught before); returns the id of the source message."""
        ...

    async def unsay(self, session_id: str, message_id: str) -> None:
        """Delete the message ``message_id`` and let the service follow."""
        ...


def _values(facts: list[Fact], attribute: str) -> list[str]:
    return [f.value for f in facts if f.attribute == attribute]


class RelationConformance:
    @pytest.fixture
    def harness(self) -> Harness:
        raise NotImplementedError("override the harness fixture")

    async def test_a_new_value_supersedes_the_old_and_keeps_it(self, harness: Harness) -> None:
        first = await harness.teach("s1", ALICE, "city", "Paris")
        second = await harness.teach("s1", ALICE, "city", "Berlin")
        current = await harness.service.facts(ALICE)
        assert _values(current, "city") == ["Berlin"]
        every = await harness.service.facts(ALICE, include_superseded=True)
        (old,) = [f for f in every if f.value == "Paris"]
        (new,) = [f for f in every if f.value == "Berlin"]
        assert old.superseded_by == new.id
        assert old.superseded_at is not None
        assert old.superseded_at >= old.valid_from
        assert old.sources == (first,)
        assert new.sources == (second,)
        assert new.current
        assert new.person == ALICE

    async def test_saying_it_again_merges_the_sources(self, harness: Harness) -> None:
        one = await harness.teach("s1", ALICE, "likes", "green tea")
        two = await harness.teach("s2", ALICE, "likes", "green tea")
        (fact,) = await harness.service.facts(ALICE, include_superseded=True)
        assert set(fact.sources) == {one, two}

    async def test_several_values_of_a_multi_valued_attribute_stand(self, harness: Harness) -> None:
        await harness.teach("s1", ALICE, "likes", "jazz")
        await harness.teach("s1", ALICE, "likes", "hiking")
        current = await harness.service.facts(ALICE)
        assert sorted(_values(current, "likes")) == ["hiking", "jazz"]

    async def test_each_fact_belongs_to_who_said_it(self, harness: Harness) -> None:
        await harness.teach("group", ALICE, "city", "Oslo")
        await harness.teach("group", BOB, "city", "Rome")
        assert _values(await harness.service.facts(ALICE), "city") == ["Oslo"]
        assert _values(await harness.service.facts(BOB), "city") == ["Rome"]

    async def test_deleting_every_source_retracts_and_restores_the_older_value(
        self, harness: Harness
    ) -> None:
        await harness.teach("s1", ALICE, "city", "Paris")
        berlin = await harness.teach("s1", ALICE, "city", "Berlin")
        await harness.unsay("s1", berlin)
        every = await harness.service.facts(ALICE, include_superseded=True)
        assert [(f.value, f.current) for f in every] == [("Paris", True)]

    async def test_a_fact_with_a_source_left_stays(self, harness: Harness) -> None:
        one = await harness.teach("s1", ALICE, "employer", "Acme")
        two = await harness.teach("s1", ALICE, "employer", "Acme")
        await harness.unsay("s1", one)
        (fact,) = await harness.service.facts(ALICE)
        assert fact.value == "Acme"
        assert fact.sources == (two,)

    async def test_retract_removes_one_fact(self, harness: Harness) -> None:
        await harness.teach("s1", ALICE, "city", "Paris")
        await harness.teach("s1", ALICE, "city", "Berlin")
        (berlin,) = await harness.service.facts(ALICE)
        await harness.service.retract(berlin.id)
        assert _values(await harness.service.facts(ALICE), "city") == ["Paris"]
        with pytest.raises(FactNotFound):
            await harness.service.retract(berlin.id)
        with pytest.raises(FactNotFound):
            await harness.service.retract("no-such-fact")

    async def test_forget_erases_one_person_and_only_them(self, harness: Harness) -> None:
        await harness.teach("s1", ALICE, "city", "Paris")
        await harness.teach("s1", ALICE, "city", "Berlin")
        await harness.teach("s2", BOB, "city", "Rome")
        assert await harness.service.forget(ALICE) == 2
        assert await harness.service.facts(ALICE, include_superseded=True) == []
        assert _values(await harness.service.facts(BOB), "city") == ["Rome"]
        assert await harness.service.forget(ALICE) == 0

    async def test_about_shows_current_facts_of_the_session(self, harness: Harness) -> None:
        await harness.teach("s1", ALICE, "city", "Paris")
        await harness.teach("s1", ALICE, "city", "Berlin")
        await harness.teach("s1", ALICE, "likes", "jazz")
        about = await harness.service.about("s1", "where do I live?")
        values = [f.value for f in about]
        assert "Berlin" in values
        assert "Paris" not in values
        assert values[0] == "Berlin"  # the relevant fact first
        assert len(await harness.service.about("s1", limit=1)) == 1
        assert await harness.service.about("never-used") == []
        with pytest.raises(ValueError, match="limit"):
            await harness.service.about("s1", limit=-1)

    async def test_a_malformed_person_is_refused(self, harness: Harness) -> None:
        with pytest.raises(ValueError, match="person"):
            await harness.service.facts(object())  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="person"):
            await harness.service.forget("no colon")  # type: ignore[arg-type]


__all__ = ["ALICE", "BOB", "Harness", "RelationConformance", "sentence"]
