import itertools

import pytest
from aalis_api_relation import (
    Fact,
    PersonRef,
    Statement,
    consolidate,
    drop_sources,
    retract,
)

ADA = PersonRef("cli", "ada")


def _ids() -> "itertools.count[int]":
    return itertools.count(1)


def said(
    attribute: str, value: str, at: int, source: str, corrects: str | None = None
) -> Statement:
    return Statement(
        person=ADA,
        attribute=attribute,
        value=value,
        text=f"{attribute} {value}",
        at=at,
        source=source,
        session_id="s",
        corrects=corrects,
    )


def run(*statements: Statement) -> dict[str, Fact]:
    counter = itertools.count(1)
    facts: dict[str, Fact] = {}
    for statement in statements:
        for fact in consolidate(list(facts.values()), statement, lambda: f"f{next(counter)}"):
            facts[fact.id] = fact
    return facts


def current(facts: dict[str, Fact]) -> list[tuple[str, str]]:
    return sorted((f.attribute, f.value) for f in facts.values() if f.current)


def test_a_correction_replaces_the_corrected_words_and_supersedes() -> None:
    facts = run(
        said("birthday", "May 4th", 1000, "m1"),
        said("*", "14th", 2000, "m2", corrects="4th"),
    )
    assert current(facts) == [("birthday", "May 14th")]
    old = facts["f1"]
    assert old.superseded_by == "f2"
    assert old.superseded_at == 2000
    assert facts["f2"].sources == ("m2",)


def test_a_correction_of_nothing_known_changes_nothing() -> None:
    facts = run(said("city", "Lyon", 1000, "m1"), said("*", "Rome", 2000, "m2", corrects="Oslo"))
    assert current(facts) == [("city", "Lyon")]
    assert len(facts) == 1


def test_a_late_older_statement_is_history_not_news() -> None:
    facts = run(said("city", "Berlin", 2000, "m2"), said("city", "Paris", 1000, "m1"))
    assert current(facts) == [("city", "Berlin")]
    assert facts["f2"].superseded_by == "f1"


def test_a_replayed_message_adds_nothing() -> None:
    facts = run(said("city", "Lyon", 1000, "m1"), said("city", "Lyon", 1000, "m1"))
    assert next(iter(facts.values())).sources == ("m1",)


def test_liking_and_disliking_supersede_each_other() -> None:
    facts = run(said("likes", "coffee", 1000, "m1"), said("dislikes", "coffee", 2000, "m2"))
    assert current(facts) == [("dislikes", "coffee")]


def test_moving_back_makes_a_new_fact() -> None:
    facts = run(
        said("city", "Paris", 1000, "m1"),
        said("city", "Berlin", 2000, "m2"),
        said("city", "Paris", 3000, "m3"),
    )
    assert current(facts) == [("city", "Paris")]
    assert len(facts) == 3


def test_removing_a_middle_fact_relinks_the_chain() -> None:
    facts = run(
        said("city", "Paris", 1000, "m1"),
        said("city", "Berlin", 2000, "m2"),
        said("city", "Rome", 3000, "m3"),
    )
    removal = retract(list(facts.values()), ["f2"])
    assert [f.id for f in removal.deleted] == ["f2"]
    (paris,) = removal.changed
    assert paris.superseded_by == "f3"
    assert not paris.current


def test_dropping_sources_keeps_facts_with_a_source_left() -> None:
    facts = run(said("city", "Lyon", 1000, "m1"), said("city", "Lyon", 2000, "m2"))
    removal = drop_sources(list(facts.values()), ["m1"])
    assert removal.deleted == ()
    assert removal.changed[0].sources == ("m2",)


def test_a_fact_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="value"):
        Fact(id="f", person=ADA, attribute="city", value=" ", text="t", valid_from=1)
    with pytest.raises(ValueError, match="confidence"):
        Fact(id="f", person=ADA, attribute="city", value="x", text="t", valid_from=1, confidence=2)
    fact = Fact(id="f", person=ADA, attribute="city", value="x", text="t", valid_from=1)
    assert Fact.from_json(fact.to_json()) == fact
    with pytest.raises(ValueError, match="PLATFORM"):
        PersonRef.parse("nocolon")
