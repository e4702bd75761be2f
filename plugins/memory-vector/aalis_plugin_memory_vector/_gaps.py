"""Gaps: spans of a session whose messages were said but may not be indexed.

A full queue, a failing embedder or store, a host that stopped before the queue drained, a
``kill -9`` at any instant, an interrupted reindex: none may lose a message silently. What
may not be indexed is recorded in the memory store's metadata (namespace
``memory-vector.gaps``) so that the next start of any host backfills it from the message
store, the source of truth (docs/recall.md, "Gaps").

Every entry is written once under a key of its own (a fresh id) and never updated; it
names its session in its data. Two processes therefore never overwrite each other's
entries, and deleting an entry after a backfill is always safe: the backfill read the
message store after it read the entry, so it saw every message the entry stands for.

Two kinds of entry share the namespace:

* a **gap**: messages that failed (or had nowhere to go); kept in RAM and backfilled;
* a **mark**: written *before* a batch is embedded (and before a reindex drops a session's
  vectors) and deleted once its vectors are written. A process that dies in between leaves
  the mark, and every later host reads it as a gap.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from aalis_api_memory import Delete, MemoryService, Put
from aalis_schema_message import new_message_id

if TYPE_CHECKING:
    from aalis_core import Handle

#: Metadata namespace of the recorded gaps and marks: key = a fresh id (older versions
#: used the session id), data = ``{"session_id", "from_ts", "to_ts", "reason", "whole"}``.
GAPS_NAMESPACE = "memory-vector.gaps"
#: The reason every mark carries: what a later host reads when the writer died.
IN_FLIGHT = "being indexed when the writing process stopped (or still is)"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@attrs.define
class Gap:
    """What is missing in one session: a span of timestamps, or the whole session."""

    from_ts: int
    to_ts: int
    reason: str
    whole: bool = False
    #: Bumped on every merge, so a backfill that read an older span does not remove it.
    version: int = 0
    last_attempt: float = 0.0
    #: The metadata keys this gap was merged from (deleted when it is resolved).
    keys: set[str] = attrs.field(factory=set)

    def covers(self, timestamp: int | None) -> bool:
        return self.whole or (timestamp is not None and self.from_ts <= timestamp <= self.to_ts)


def entry_data(
    session_id: str, low: int, high: int, reason: str, *, whole: bool = False
) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "from_ts": low,
        "to_ts": high,
        "reason": reason,
        "whole": whole,
    }


def read_entry(key: str, data: object) -> tuple[str, Gap] | None:
    """``(session_id, gap)`` of one stored entry, or None when it is unreadable. Entries
    of older versions have no ``session_id``: their key is the session."""
    if not isinstance(data, dict):
        return None
    low, high, reason = data.get("from_ts"), data.get("to_ts"), data.get("reason", "")
    if isinstance(low, bool) or isinstance(high, bool):
        return None
    if not isinstance(low, int) or not isinstance(high, int) or low > high:
        return None
    session_id = data.get("session_id", key)
    if not isinstance(session_id, str):
        return None
    return session_id, Gap(low, high, str(reason), whole=data.get("whole") is True, keys={key})


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
        """Read every gap and mark recorded so far (by any process) as gaps to backfill."""
        if not self._memory.present:
            return
        try:
            entries = await self._memory.use.list_metadata(GAPS_NAMESPACE)
        except Exception as exc:
            self._logger.error("recorded index gaps are unreadable", error=str(exc))
            return
        for entry in entries:
            found = read_entry(entry.key, entry.data)
            if found is not None:
                session_id, gap = found
                self._merge(session_id, gap)

    def _merge(self, session_id: str, new: Gap) -> Gap:
        gap = self._gaps.get(session_id)
        if gap is None:
            self._gaps[session_id] = new
            return new
        gap.from_ts, gap.to_ts = min(gap.from_ts, new.from_ts), max(gap.to_ts, new.to_ts)
        gap.whole = gap.whole or new.whole
        gap.reason = new.reason
        gap.keys |= new.keys
        gap.version += 1
        return gap

    async def record(
        self, session_id: str, timestamps: list[int], reason: str, *, whole: bool = False
    ) -> bool:
        """Record that these messages of ``session_id`` are not indexed, and why; whether
        the record reached the store (it is kept in RAM either way)."""
        if not timestamps and not whole:
            return True
        low, high = (min(timestamps), max(timestamps)) if timestamps else (INT64_MIN, INT64_MAX)
        key = new_message_id()
        self._merge(session_id, Gap(low, high, reason, whole=whole, keys={key}))
        self._logger.warning(
            "messages not indexed; gap recorded for backfill",
            session_id=session_id,
            count=len(timestamps) if timestamps else "all",
            reason=reason,
        )
        return await self._commit(
            [Put(GAPS_NAMESPACE, key, entry_data(session_id, low, high, reason, whole=whole))],
            "index gap not persisted",
        )

    async def mark(
        self,
        spans: Mapping[str, Iterable[int] | None],
        reason: str = IN_FLIGHT,
        *,
        unmark: Iterable[str] = (),
    ) -> dict[str, str]:
        """Write one mark per session in ONE metadata commit; returns session -> key.

        ``None`` for a session marks all of it (a reindex). Marks are not gaps of this
        process (its own work is under way); they are what a later host finds if this one
        dies before ``unmark``. ``unmark`` names finished marks to delete in the same
        commit (the indexer folds the previous batch's unmark into the next batch's mark).
        """
        keys: dict[str, str] = {}
        ops: list[Put | Delete] = [Delete(GAPS_NAMESPACE, key) for key in unmark]
        for session_id, stamps in spans.items():
            values = None if stamps is None else list(stamps)
            if values is not None and not values:
                continue
            key = keys[session_id] = new_message_id()
            if values is None:
                data = entry_data(session_id, INT64_MIN, INT64_MAX, reason, whole=True)
            else:
                data = entry_data(session_id, min(values), max(values), reason)
            ops.append(Put(GAPS_NAMESPACE, key, data))
        if ops and not await self._commit(ops, "index marks not persisted"):
            raise RuntimeError("the index marks could not be written")
        return keys

    async def unmark(self, keys: Iterable[str]) -> None:
        """Delete marks whose vectors are written (one commit)."""
        await self._commit([Delete(GAPS_NAMESPACE, key) for key in keys], "index mark not removed")

    async def _commit(self, ops: list[Put | Delete], failure: str) -> bool:
        if not ops or not self._memory.present:
            return bool(not ops)
        try:
            await self._memory.use.commit_metadata(ops)
        except Exception as exc:  # the RAM copy still drives the backfill in this process
            self._logger.error(failure, error=str(exc))
            return False
        return True

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
        await self.unmark(gap.keys)

    async def forget(self, session_id: str, keys: set[str]) -> None:
        """Delete these entries of a session that a check found fully indexed; the RAM gap
        goes too unless it holds entries recorded since."""
        gap = self._gaps.get(session_id)
        if gap is not None and gap.keys <= keys:
            del self._gaps[session_id]
        await self.unmark(keys)

    async def drop(self, session_id: str | None, before: str | None = None) -> None:
        """Forget the gaps and marks of a session (or all): its messages were cleared.

        ``before`` is an entry id taken when the clear began: entries written since (for
        messages said after the history was cleared, by any process) are kept, since ids
        sort by time. Entries of older versions (keyed by session) always go.
        """

        def doomed(key: str, data: object) -> bool:
            found = read_entry(key, data)
            if found is None or (session_id is not None and found[0] != session_id):
                return False
            new_style = isinstance(data, dict) and "session_id" in data
            return before is None or not new_style or key < before

        for sid in list(self._gaps) if session_id is None else [session_id]:
            gap = self._gaps.get(sid)
            if gap is None:
                continue
            gap.keys = {k for k in gap.keys if before is not None and k >= before}
            if not gap.keys:
                del self._gaps[sid]
        if not self._memory.present:
            return
        try:
            entries = await self._memory.use.list_metadata(GAPS_NAMESPACE)
        except Exception as exc:
            self._logger.error("index gaps not removed", error=str(exc))
            return
        await self.unmark([e.key for e in entries if doomed(e.key, e.data)])


__all__ = ["GAPS_NAMESPACE", "IN_FLIGHT", "Gap", "GapBook", "entry_data", "read_entry"]
