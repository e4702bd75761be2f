"""The facts panel: what the fact layer knows about the people of a session, each fact with
its history, and the two corrections a person may make from the page (docs/host/serve.md).

An edit supersedes the fact with the value typed (the old one stays in the history, so it
needs no confirmation); a retraction removes a wrong fact (the value it had superseded is
current again) and, like every removal here, goes only with ``"confirm": true``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from aalis_api_relation import Fact, PersonRef, RelationService


def fact_json(fact: Fact) -> dict[str, Any]:
    return {**fact.to_json(), "current": fact.current}


async def session_facts(
    service: RelationService, session_id: str, persons: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """Per person of the session: every fact, superseded ones too, oldest first (a fact's
    history is the chain of ``superseded_by``)."""
    people = []
    for person in persons:
        who = PersonRef(person["platform"], person["user_id"])
        facts = await service.facts(who, include_superseded=True)
        people.append({"person": str(who), "facts": [fact_json(f) for f in facts]})
    return {"session_id": session_id, "persons": people}


async def edit_fact(service: Any, fact_id: str, value: str) -> Fact:
    """``value`` supersedes ``fact_id``; ``NotImplementedError`` when the provider has no
    edit (it is not part of ``RelationService``)."""
    edit = getattr(service, "edit", None)
    if edit is None:
        raise NotImplementedError("this relation provider cannot edit facts")
    fact: Fact = await edit(fact_id, value, at=int(time.time() * 1000))
    return fact


__all__ = ["edit_fact", "fact_json", "session_facts"]
