"""Gaps: spans of a session whose messages were said but not indexed.

A full queue, a failing embedder or store, or a host that stopped before the queue drained
must never lose a message silently. What was not indexed is recorded as a time span per
session — in RAM, and in the memory store's metadata so a later process backfills it — and
the indexer re-reads the span from the message store (the source of truth) when it can.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import attrs
from aalis_api_memory import MemoryService, MetadataKeys, supports

if TYPE_CHECKING:
    from aalis_core.handles import Handle

#: Metadata namespace of the recorded gaps: key = session id.
GAPS_NAMESPACE = "memory-vector.gaps"


@attrs.define
class Gap:
    from_ts: int
    to_ts: int
    reason: str
    #: Bumped on every merge, so a backfill that read an older span does not remove it.
    version: int = 0
    last_attempt: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"from_ts": self.from_ts, "to_ts": self.to_ts, "reason": self.reason}


def _gap_from(data: object) -> Gap | None:
    if not isinstance(data, dict):
        return None
    low, high, reason = data.get("from_ts"), data.get("to_ts"), data.get("reason", "")
    if isinstance(low, bool) or isinstance(high, bool):
        return None
    if not isinstance(low, int) or not isinstance(high, int) or low > high:
        return None
    return Gap(low, high, str(reason))


class GapBook:
    """The gaps per session; ``memory`` is the plugin's memory handle (may be absent)."""

    def __init__(self, memory: Handle[MemoryService], logger: Any) -> None:
        self._memory = memory
        self._logger = logger
        self._gaps: dict[str, Gap] = {}

    def __len__(self) -> int:
        return len(self._gaps)

    def items(self) -> list[tuple[str, Gap]]:
        return list(self._gaps.items())

    def get(self, session_id: str) -> Gap | None:
        return self._gaps.get(session_id)

    async def load(self) -> None:
        """Read the gaps an earlier process recorded."""
        if not self._memory.present:
            return
        try:
            entries = await self._memory.use.list_metadata(GAPS_NAMESPACE)
        except Exception as exc:
            self._logger.error("recorded index gaps are unreadable", error=str(exc))
            return
        for entry in entries:
            gap = _gap_from(entry.data)
            if gap is not None:
                self._merge(entry.key, gap.from_ts, gap.to_ts, gap.reason)

    def _merge(self, session_id: str, low: int, high: int, reason: str) -> Gap:
        gap = self._gaps.get(session_id)
        if gap is None:
            gap = self._gaps[session_id] = Gap(low, high, reason)
        else:
            gap.from_ts, gap.to_ts = min(gap.from_ts, low), max(gap.to_ts, high)
            gap.reason = reason
            gap.version += 1
        return gap

    async def record(self, session_id: str, timestamps: list[int], reason: str) -> None:
        """Record that these messages of ``session_id`` are not indexed, and why."""
        if not timestamps:
            return
        gap = self._merge(session_id, min(timestamps), max(timestamps), reason)
        self._logger.warning(
            "messages not indexed; gap recorded for backfill",
            session_id=session_id,
            count=len(timestamps),
            reason=reason,
        )
        await self._persist(session_id, gap)

    async def _persist(self, session_id: str, gap: Gap) -> None:
        if not self._memory.present:
            return
        try:
            await self._memory.use.save_metadata(GAPS_NAMESPACE, session_id, gap.to_json())
        except Exception as exc:  # the RAM copy still drives the backfill in this process
            self._logger.error("index gap not persisted", session_id=session_id, error=str(exc))

    def attempted(self, session_id: str, reason: str) -> None:
        gap = self._gaps.get(session_id)
        if gap is not None:
            gap.last_attempt = time.monotonic()
            gap.reason = reason

    def due(self, retry_s: float, *, force: bool = False) -> list[tuple[str, Gap]]:
        now = time.monotonic()
        return [
            (sid, gap)
            for sid, gap in self._gaps.items()
            if force or gap.last_attempt == 0.0 or now - gap.last_attempt >= retry_s
        ]

    async def resolve(self, session_id: str, version: int) -> None:
        """The span read at ``version`` is indexed; forget the gap unless it grew since."""
        gap = self._gaps.get(session_id)
        if gap is None or gap.version != version:
            return
        del self._gaps[session_id]
        await self._delete(session_id)

    async def drop(self, session_id: str | None) -> None:
        """Forget the gaps of a session (or all of them): its vectors were cleared."""
        doomed = list(self._gaps) if session_id is None else [session_id]
        for sid in doomed:
            self._gaps.pop(sid, None)
        if not self._memory.present:
            return
        if session_id is None:
            memory = self._memory.use
            keys: list[str] | None = None
            if supports(memory, MetadataKeys, "list_metadata_keys"):
                try:
                    keys = await memory.list_metadata_keys(GAPS_NAMESPACE)
                except Exception:
                    keys = None
            if keys is None:
                keys = [e.key for e in await memory.list_metadata(GAPS_NAMESPACE)]
            doomed = list(keys)
        for sid in doomed:
            await self._delete(sid)

    async def _delete(self, session_id: str) -> None:
        if not self._memory.present:
            return
        try:
            await self._memory.use.delete_metadata(GAPS_NAMESPACE, session_id)
        except Exception as exc:
            self._logger.error("index gap not removed", session_id=session_id, error=str(exc))


__all__ = ["GAPS_NAMESPACE", "Gap", "GapBook"]
