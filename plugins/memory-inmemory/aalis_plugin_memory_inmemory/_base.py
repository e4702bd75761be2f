"""What the job modules of ``InMemoryMemory`` share: the rows, the entries, the id index.

``InMemoryBase`` holds the store's state (sessions as ordered lists of ``Row``, metadata as
``Entry`` text, the index of stored ids, the insertion sequence) and the helpers several jobs
use: copying in and out, inserting in order, refusing a stored id, deleting rows. Each job of
the contract is a mixin over it (``history.py``, ``queries.py``, ``identity.py``,
``transfer.py``, ``exact.py``, ``metadata.py``, ``leases.py``); ``store.py`` assembles them.
The layout is the same in every memory backend (docs/backends/implementing.md, "One layout
for every backend").
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

import attrs
from aalis_api_memory import (
    DEFAULT_CROSS_SESSION_MAX_LIMIT,
    DEFAULT_RANGE_QUERY_LIMIT,
    CompleteMemoryBackend,
    MessageIdConflict,
)
from aalis_schema_message import CONTROL_KINDS, Message

Limit = int | float


@attrs.define
class Row:
    """One stored message; ``seq`` is the store-wide insertion sequence."""

    timestamp: int
    seq: int
    message: Message
    archived: bool = False

    @property
    def order(self) -> tuple[int, int]:
        return (self.timestamp, self.seq)

    @property
    def conversation(self) -> bool:
        return self.message.kind not in CONTROL_KINDS


@attrs.define
class Entry:
    """A metadata entry as stored: raw JSON text (maybe unreadable) and its write time."""

    text: str
    updated_at: int


def _positive_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return value


class InMemoryBase(CompleteMemoryBackend):
    """The state and shared helpers of ``InMemoryMemory`` (its job mixins build on it).

    ``range_query_limit`` caps ``get_messages_by_session_range`` (the earliest N);
    ``cross_session_max_limit`` caps ``get_recent_messages_across_sessions``. ``logger``
    receives the warning for an unreadable metadata entry (a structlog-style logger; the
    plugin passes its own).
    """

    def __init__(
        self,
        *,
        range_query_limit: int = DEFAULT_RANGE_QUERY_LIMIT,
        cross_session_max_limit: int = DEFAULT_CROSS_SESSION_MAX_LIMIT,
        logger: Any = None,
    ) -> None:
        self.range_query_limit = _positive_int(range_query_limit, "range_query_limit")
        self.cross_session_max_limit = _positive_int(
            cross_session_max_limit, "cross_session_max_limit"
        )
        self._logger = logger
        self._sessions: dict[str, list[Row]] = {}
        self._metadata: dict[str, dict[str, Entry]] = {}
        self._seq = 0
        #: message id -> session id of every stored message
        self._ids: dict[str, str] = {}

    def _log(self) -> Any:
        if self._logger is None:
            from aalis_core import get_logger

            self._logger = get_logger("memory-inmemory")
        return self._logger

    def _rows(self, session_id: str) -> list[Row]:
        return self._sessions.get(session_id, [])

    def _refuse_stored_ids(self, messages: Sequence[Message]) -> None:
        seen: set[str] = set()
        for message in messages:
            assert message.id is not None  # the contract's front half sets it
            if message.id in self._ids or message.id in seen:
                raise MessageIdConflict(f"message id {message.id!r} is already stored")
            seen.add(message.id)

    def _insert(
        self, session_id: str, message: Message, timestamp: int, archived: bool = False
    ) -> None:
        # Copy on write: the stored message shares no container with the caller's.
        stored = attrs.evolve(message, timestamp=timestamp)
        assert stored.id is not None
        self._ids[stored.id] = session_id
        self._seq += 1
        row = Row(timestamp, self._seq, stored, archived)
        rows = self._sessions.setdefault(session_id, [])
        bisect.insort(rows, row, key=lambda r: r.order)

    @staticmethod
    def _out(row: Row) -> Message:
        # Copy on read: mutating a returned message's metadata changes nothing stored.
        return row.message.copy()

    def _active(self, session_id: str) -> list[Row]:
        return [row for row in self._rows(session_id) if not row.archived]

    def _forget_ids(self, rows: Sequence[Row]) -> None:
        for row in rows:
            if row.message.id is not None:
                self._ids.pop(row.message.id, None)

    def _delete_rows(self, session_id: str, doomed: Any) -> int:
        rows = self._rows(session_id)
        kept = [row for row in rows if not doomed(row)]
        deleted = len(rows) - len(kept)
        if deleted:
            self._forget_ids([row for row in rows if doomed(row)])
            if kept:
                self._sessions[session_id] = kept
            else:
                del self._sessions[session_id]
        return deleted


__all__ = ["Entry", "InMemoryBase", "Limit", "Row"]
