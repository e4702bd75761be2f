"""``RelationService``: what the fact layer offers its consumers (the prompt, the CLI, serve).

See docs/host/facts.md. A provider derives facts from what people say; consumers read them,
retract one that is wrong and forget a person. Every method is async.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from aalis_api_relation._types import Fact, PersonRef


@runtime_checkable
class RelationService(Protocol):
    """The fact layer as its consumers see it: read, retract, forget (docs/host/facts.md)."""

    async def facts(self, person: PersonRef, *, include_superseded: bool = False) -> list[Fact]:
        """What is known about ``person`` (any object with ``platform`` and ``user_id``),
        oldest first; superseded facts only when asked. Unknown person: ``[]``."""
        ...

    async def about(
        self, session_id: str, query: str | None = None, *, limit: int | None = None
    ) -> list[Fact]:
        """The current facts about the people of ``session_id`` that the provider's scope
        lets this session see (what the prompt block shows), the ones relevant to ``query``
        first, at most ``limit``."""
        ...

    async def forget(self, person: PersonRef) -> int:
        """Erase every fact about ``person``, superseded ones too; returns how many."""
        ...

    async def retract(self, fact_id: str) -> None:
        """Remove one fact (``FactNotFound`` if there is none); the fact it had superseded
        becomes current again."""
        ...


__all__ = ["RelationService"]
