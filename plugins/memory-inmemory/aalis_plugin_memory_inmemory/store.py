"""``InMemoryMemory``: the reference ``MemoryService``, kept in process memory.

It is the executable reading of the memory contract (docs/reference/memory-contract.md):
every optional method and extension is here, written for clarity rather than speed, so that
when a database backend and this one disagree under the conformance kit, this one is the
easier to check by eye.

Why it is still careful:

* Copies on write and on read. Callers share nothing with the store: a message is copied
  when saved and again when returned, and metadata is kept as JSON text (which also lets the
  store hold an unreadable entry, as a database can).
* Atomic calls. ``CompleteMemoryBackend`` (aalis_api_memory._backend) validates the whole
  input first; the storage methods here then do their work without suspending, so on one
  event loop no other coroutine can observe half a batch.
* Order by ``(timestamp, insertion sequence)``, as every backend must.
* Ids unique in the store: an index ``id -> (session, row)`` refuses a second message with
  a stored id (``MessageIdConflict``) before anything changes, and finds messages by id.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

import attrs
from aalis_api_memory import (
    DEFAULT_CROSS_SESSION_MAX_LIMIT,
    DEFAULT_RANGE_QUERY_LIMIT,
    ArchiveConflict,
    CompleteMemoryBackend,
    EncodedOp,
    ExactCommit,
    HistorySnapshot,
    ImportRecord,
    MessageIdConflict,
    MetadataEntry,
    RangeQuery,
    RecentMessageRecord,
    RecentQuery,
    SessionInfo,
    StoredMessage,
    StoredRecord,
    check_key,
    check_namespace,
    decode_metadata,
    same_entry,
    take_last,
)
from aalis_schema_message import CONTROL_KINDS, Message, now_ms

from aalis_plugin_memory_inmemory.leases import LeaseTable

Limit = int | float


@attrs.define
class _Row:
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
class _Entry:
    """A metadata entry as stored: raw JSON text (maybe unreadable) and its write time."""

    text: str
    updated_at: int


def _positive_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return value


class InMemoryMemory(CompleteMemoryBackend):
    """Chat history and metadata in dicts; nothing survives the process.

    ``range_query_limit`` caps ``get_messages_by_session_range`` (the earliest N);
    ``cross_session_max_limit`` caps ``get_recent_messages_across_sessions``. ``logger``
    receives the warning for an unreadable metadata entry (a structlog-style logger; the
    plugin passes its own). Arguments are checked by ``CompleteMemoryBackend``.
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
        self._sessions: dict[str, list[_Row]] = {}
        self._metadata: dict[str, dict[str, _Entry]] = {}
        self._seq = 0
        #: message id -> session id of every stored message
        self._ids: dict[str, str] = {}
        self._leases = LeaseTable()

    # -- internals ------------------------------------------------------------------------

    def _log(self) -> Any:
        if self._logger is None:
            from aalis_core.logging import get_logger

            self._logger = get_logger("memory-inmemory")
        return self._logger

    def _rows(self, session_id: str) -> list[_Row]:
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
        row = _Row(timestamp, self._seq, stored, archived)
        rows = self._sessions.setdefault(session_id, [])
        bisect.insort(rows, row, key=lambda r: r.order)

    @staticmethod
    def _out(row: _Row) -> Message:
        # Copy on read: mutating a returned message's metadata changes nothing stored.
        return row.message.copy()

    def _active(self, session_id: str) -> list[_Row]:
        return [row for row in self._rows(session_id) if not row.archived]

    @staticmethod
    def _last_conversation(rows: list[_Row], limit: Limit) -> list[_Row]:
        """Every row after the (limit+1)-th newest conversation row (markers included)."""
        if limit == math.inf:
            return rows
        seen = 0
        for index in range(len(rows) - 1, -1, -1):
            if rows[index].conversation:
                seen += 1
                if seen > limit:
                    return rows[index + 1 :]
        return rows

    # -- history --------------------------------------------------------------------------

    def _forget_ids(self, rows: Sequence[_Row]) -> None:
        for row in rows:
            if row.message.id is not None:
                self._ids.pop(row.message.id, None)

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        self._refuse_stored_ids([message])
        self._insert(session_id, message, timestamp)

    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        return [self._out(row) for row in self._last_conversation(self._active(session_id), limit)]

    async def _count_history(self, session_id: str) -> int:
        return sum(1 for row in self._rows(session_id) if not row.archived and row.conversation)

    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        return [self._out(row) for row in take_last(self._rows(session_id), limit)]

    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        active = self._active(session_id)
        chosen = active if count == math.inf else active[: int(count)]
        archived = 0
        for position, row in enumerate(chosen):
            if position not in keep:
                row.archived = True
                archived += 1
        return archived

    async def _clear_session(self, session_id: str) -> None:
        self._forget_ids(self._sessions.pop(session_id, []))

    # -- exact archiving (aalis_api_memory._exact) -----------------------------------------

    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        # ``seq`` is store-wide and never reused, so it names one message for good.
        rows = self._active(session_id)
        return HistorySnapshot(
            tuple(self._out(row) for row in rows), tuple(str(row.seq) for row in rows)
        )

    async def _archive_exact(self, session_id: str, commit: ExactCommit) -> int:
        # Every change without an await: one atomic step on the loop.
        guard = commit.guard
        entry = self._metadata.get(guard.namespace, {}).get(guard.key)
        stored = None if entry is None else decode_metadata(entry.text)
        if not same_entry(stored, guard.expected):
            raise ArchiveConflict("guard", "the guard entry changed since the snapshot")
        active = {str(row.seq): row for row in self._active(session_id)}
        rows = [active.get(ident) for ident in commit.ids]
        if any(row is None for row in rows):
            raise ArchiveConflict("messages", "a message of the snapshot is no longer active")
        for row in rows:
            assert row is not None
            row.archived = True
        entry = _Entry(guard.text, commit.updated_at)
        self._metadata.setdefault(guard.namespace, {})[guard.key] = entry
        if commit.marker is not None:
            self._insert(session_id, commit.marker.message, commit.marker.timestamp)
        return len(rows)

    async def _clear_all(self) -> None:
        self._sessions.clear()
        self._ids.clear()

    # -- leases (aalis_api_memory._leases; the table is in leases.py) ----------------------

    async def _acquire_lease(self, name: str, holder: str, ttl_ms: int, now: int) -> bool:
        return self._leases.acquire(name, holder, ttl_ms, now)

    async def _release_lease(self, name: str, holder: str) -> bool:
        return self._leases.release(name, holder)

    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        excluded = set(query.exclude_kinds or ())
        found: list[Message] = []
        for row in self._rows(session_id):
            if len(found) >= self.range_query_limit:
                break
            if not query.from_ts <= row.timestamp <= query.to_ts:
                continue
            if query.roles and row.message.role not in query.roles:
                continue
            if row.message.kind is not None and row.message.kind in excluded:
                continue
            found.append(self._out(row))
        return found

    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        roles = set(query.roles)
        kinds = None if query.kinds is None else set(query.kinds)
        excluded = set(query.exclude_kinds or ())
        skipped = set(query.exclude_session_ids or ())
        matches: list[tuple[_Row, str]] = []
        for session_id, rows in self._sessions.items():
            if session_id in skipped:
                continue
            for row in rows:
                message = row.message
                if row.archived or message.role not in roles:
                    continue
                if kinds is not None and message.kind not in kinds:
                    continue
                if message.kind is not None and message.kind in excluded:
                    continue
                if query.since_ts is not None and row.timestamp < query.since_ts:
                    continue
                if query.platform is not None and (
                    message.metadata is None or message.metadata.get("platform") != query.platform
                ):
                    continue
                matches.append((row, session_id))
        matches.sort(key=lambda item: item[0].order)
        return [
            RecentMessageRecord(session_id, self._out(row))
            for row, session_id in matches[-query.limit :]
        ]

    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        changed = 0
        for row in take_last(self._rows(session_id), recent_limit):
            content = row.message.content
            if isinstance(content, str) and old in content:
                row.message = attrs.evolve(row.message, content=content.replace(old, new))
                changed += 1
        return changed

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        doomed = set(timestamps)
        return self._delete_rows(session_id, lambda row: row.timestamp in doomed)

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

    # -- identity -------------------------------------------------------------------------

    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        found: list[StoredRecord] = []
        for session_id in {self._ids[i] for i in ids if i in self._ids}:
            for row in self._rows(session_id):
                if row.message.id in ids:
                    found.append(
                        StoredRecord(
                            session_id=session_id, message=self._out(row), archived=row.archived
                        )
                    )
        return found

    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        doomed = set(ids)
        return self._delete_rows(session_id, lambda row: row.message.id in doomed)

    # -- extensions -----------------------------------------------------------------------

    async def _list_sessions(self) -> list[SessionInfo]:
        infos = []
        for session_id, rows in self._sessions.items():
            archived = sum(1 for row in rows if row.archived)
            infos.append(
                SessionInfo(
                    session_id=session_id,
                    active=len(rows) - archived,
                    archived=archived,
                    last_timestamp=rows[-1].timestamp if rows else None,
                )
            )
        infos.sort(key=lambda info: info.session_id)
        infos.sort(key=lambda info: info.last_timestamp or 0, reverse=True)
        return infos

    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        return [StoredMessage(self._out(row), row.archived) for row in self._rows(session_id)]

    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        self._refuse_stored_ids([record.message for record in records])
        for record in records:
            self._insert(session_id, record.message, record.timestamp, record.archived)
        return len(records)

    # -- metadata -------------------------------------------------------------------------

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        self._metadata.setdefault(namespace, {})[key] = _Entry(text, updated_at)

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        entry = self._metadata.get(namespace, {}).get(key)
        if entry is None:
            return None
        data = decode_metadata(entry.text)
        if data is None:
            self._log().warning("unreadable metadata entry", namespace=namespace, key=key)
        return data

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        entries = []
        for key, entry in sorted(self._metadata.get(namespace, {}).items()):
            data = decode_metadata(entry.text)
            if data is not None:
                entries.append(MetadataEntry(key=key, data=data, updated_at=entry.updated_at))
        return entries

    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        return sorted(self._metadata.get(namespace, {}))

    async def _list_namespaces(self) -> list[str]:
        return sorted(namespace for namespace, entries in self._metadata.items() if entries)

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        self._drop(namespace, key)

    def _drop(self, namespace: str, key: str) -> None:
        entries = self._metadata.get(namespace)
        if entries is not None:
            entries.pop(key, None)
            if not entries:
                del self._metadata[namespace]

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        # No await in between: on one event loop nobody observes half a batch.
        for op, namespace, key, text in ops:
            if op == "put":
                assert text is not None
                self._metadata.setdefault(namespace, {})[key] = _Entry(text, updated_at)
            else:
                self._drop(namespace, key)

    def put_raw_metadata(self, namespace: str, key: str, raw_text: str) -> None:
        """Store ``raw_text`` as is, unreadable or not: lets tests reproduce a corrupt entry."""
        self._metadata.setdefault(check_namespace(namespace), {})[check_key(key)] = _Entry(
            raw_text, now_ms()
        )


__all__ = ["InMemoryMemory"]
