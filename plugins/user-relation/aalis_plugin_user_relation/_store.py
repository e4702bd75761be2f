"""Where facts live: the memory store's metadata, namespaces ``user-relation.*``.

Why there and not a store of its own (docs/host/facts.md, "Storage"): every backend
(SQLite, PostgreSQL, MongoDB, in-memory) already keeps metadata durably and atomically
(``commit_metadata``), ``aalis export`` / ``import`` / ``migrate`` carry metadata, and a
clear or ``forget_person`` reaches it; a fact store of its own would have to earn each of
those guarantees again. One entry per fact (key: the fact id, data: ``Fact.to_json``, whose
``person`` field is also the ``PERSON_MARK`` forgetting looks for); every change of one
statement or one deletion is ONE ``commit_metadata``, so a crash never leaves a fact
superseded by a fact that was not written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from aalis_api_memory import Delete, MemoryService, MetadataOp, Put
from aalis_api_relation import Fact, PersonRef, RelationUnavailable

if TYPE_CHECKING:
    from aalis_core import Handle

NAMESPACE = "user-relation"
#: One entry per fact.
FACTS_NAMESPACE = "user-relation.facts"
#: Per session: the newest message timestamp read and who spoke in what was read
#: (``{"through": ms, "speakers": ["PLATFORM:USER_ID", ...]}``).
PROGRESS_NAMESPACE = "user-relation.progress"
#: Per session: a span not read yet (``{"from_ts", "to_ts", "reason"}``).
GAPS_NAMESPACE = "user-relation.gaps"
NAMESPACES = (FACTS_NAMESPACE, PROGRESS_NAMESPACE, GAPS_NAMESPACE)


class FactStore:
    def __init__(self, memory: Handle[MemoryService], logger: Any) -> None:
        self._memory = memory
        self._logger = logger

    @property
    def present(self) -> bool:
        return bool(self._memory.present)

    @property
    def memory(self) -> MemoryService:
        if not self._memory.present:
            raise RelationUnavailable("no memory backend is active: facts have nowhere to live")
        service: MemoryService = self._memory.use
        return service

    async def all(self) -> list[Fact]:
        """Every readable fact; an entry that is not a fact is logged and left alone."""
        facts: list[Fact] = []
        for entry in await self.memory.list_metadata(FACTS_NAMESPACE):
            try:
                facts.append(Fact.from_json(entry.data))
            except (KeyError, TypeError, ValueError) as exc:
                self._logger.warning("unreadable fact skipped", key=entry.key, error=str(exc))
        return facts

    async def of(self, person: PersonRef) -> list[Fact]:
        return [f for f in await self.all() if f.person == person]

    async def get(self, fact_id: str) -> Fact | None:
        data = await self.memory.get_metadata(FACTS_NAMESPACE, fact_id)
        if data is None:
            return None
        try:
            return Fact.from_json(data)
        except (KeyError, TypeError, ValueError):
            return None

    async def write(self, changed: Iterable[Fact], deleted: Iterable[Fact] = ()) -> None:
        """Write ``changed`` and delete ``deleted`` in ONE commit (nothing to do: no commit)."""
        ops: list[MetadataOp] = [Delete(FACTS_NAMESPACE, f.id) for f in deleted]
        ops += [Put(FACTS_NAMESPACE, f.id, f.to_json()) for f in changed]
        if ops:
            await self.memory.commit_metadata(ops)

    async def progress(self) -> tuple[dict[str, int], dict[str, set[str]]]:
        """How far each session was read, and who spoke in it."""
        found: dict[str, int] = {}
        speakers: dict[str, set[str]] = {}
        for entry in await self.memory.list_metadata(PROGRESS_NAMESPACE):
            through = entry.data.get("through")
            if isinstance(through, int) and not isinstance(through, bool):
                found[entry.key] = through
            names = entry.data.get("speakers")
            if isinstance(names, list):
                speakers[entry.key] = {n for n in names if isinstance(n, str)}
        return found, speakers

    async def save_progress(
        self, progress: dict[str, int], speakers: dict[str, set[str]] | None = None
    ) -> None:
        ops: list[MetadataOp] = [
            Put(
                PROGRESS_NAMESPACE,
                sid,
                {"through": ts, "speakers": sorted((speakers or {}).get(sid, set()))},
            )
            for sid, ts in progress.items()
        ]
        if ops:
            await self.memory.commit_metadata(ops)


__all__ = [
    "FACTS_NAMESPACE",
    "GAPS_NAMESPACE",
    "NAMESPACE",
    "NAMESPACES",
    "PROGRESS_NAMESPACE",
    "FactStore",
]
