"""``InMemoryMemory``: the reference ``MemoryService``, kept in process memory.

It is the executable reading of the memory contract (docs/reference/memory-contract.md):
every optional method and extension is here, written for clarity rather than speed, so that
when a database backend and this one disagree under the conformance kit, this one is the
easier to check by eye.

Why it is still careful:

* Copies on write and on read. Callers share nothing with the store: a message is copied
  when saved and again when returned, and metadata is kept as JSON text (which also lets the
  store hold an unreadable entry, as a database can).
* Atomic calls. Every method validates its whole input first and then does its work without
  an ``await`` in between, so on one event loop no other coroutine can observe half a batch.
* Order by ``(timestamp, insertion sequence)``, as every backend must.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

import attrs
from aalis_api_memory.exact import (
    ArchiveConflict,
    HistorySnapshot,
    MetadataGuard,
    check_guard,
    check_ids,
    check_marker,
    same_entry,
)
from aalis_api_memory.types import (
    MetadataEntry,
    MetadataOp,
    RecentMessageRecord,
    RecentMessagesQuery,
    SessionInfo,
    StoredMessage,
)
from aalis_api_memory.validation import (
    DEFAULT_CROSS_SESSION_MAX_LIMIT,
    DEFAULT_FULL_HISTORY_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    DEFAULT_RANGE_QUERY_LIMIT,
    DEFAULT_RECENT_LIMIT,
    check_count,
    check_keep,
    check_key,
    check_limit,
    check_message,
    check_namespace,
    check_recent_query,
    check_replacement,
    check_session_id,
    check_str_filter,
    check_timestamp,
    check_timestamps,
    decode_metadata,
    encode_batch,
    encode_metadata,
    take_last,
)
from aalis_schema_message import CONTROL_KINDS, Message, now_ms

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


class InMemoryMemory:
    """Chat history and metadata in dicts; nothing survives the process.

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
        self._sessions: dict[str, list[_Row]] = {}
        self._metadata: dict[str, dict[str, _Entry]] = {}
        self._seq = 0

    # -- internals ------------------------------------------------------------------------

    def _log(self) -> Any:
        if self._logger is None:
            from aalis_core.logging import get_logger

            self._logger = get_logger("memory-inmemory")
        return self._logger

    def _rows(self, session_id: str) -> list[_Row]:
        return self._sessions.get(session_id, [])

    def _insert(self, session_id: str, message: Message, archived: bool = False) -> None:
        # Copy on write: the stored message shares no container with the caller's.
        timestamp = message.timestamp if message.timestamp is not None else now_ms()
        stored = attrs.evolve(message, timestamp=timestamp)
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
        if limit == 0:
            return []
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

    async def save_message(self, session_id: str, message: Message) -> None:
        check_session_id(session_id)
        check_message(message)
        self._insert(session_id, message)

    async def get_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        check_session_id(session_id)
        count = check_limit(limit, DEFAULT_HISTORY_LIMIT)
        return [self._out(row) for row in self._last_conversation(self._active(session_id), count)]

    async def count_history(self, session_id: str) -> int:
        check_session_id(session_id)
        return sum(1 for row in self._rows(session_id) if not row.archived and row.conversation)

    async def get_full_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        check_session_id(session_id)
        count = check_limit(limit, DEFAULT_FULL_HISTORY_LIMIT)
        return [self._out(row) for row in take_last(self._rows(session_id), count)]

    async def archive_span(self, session_id: str, count: Limit, keep: Sequence[int] = ()) -> int:
        check_session_id(session_id)
        span = check_count(count)
        kept = check_keep(keep)
        active = self._active(session_id)
        chosen = active if span == math.inf else active[: int(span)]
        archived = 0
        for position, row in enumerate(chosen):
            if position not in kept:
                row.archived = True
                archived += 1
        return archived

    async def clear_session(self, session_id: str) -> None:
        check_session_id(session_id)
        self._sessions.pop(session_id, None)

    # -- exact archiving (aalis_api_memory.exact) -----------------------------------------

    async def history_snapshot(self, session_id: str) -> HistorySnapshot:
        check_session_id(session_id)
        # ``seq`` is store-wide and never reused, so it names one message for good.
        rows = self._active(session_id)
        return HistorySnapshot(
            tuple(self._out(row) for row in rows), tuple(str(row.seq) for row in rows)
        )

    async def archive_exact(
        self,
        session_id: str,
        ids: Sequence[str],
        *,
        guard: MetadataGuard,
        marker: Message | None = None,
    ) -> int:
        check_session_id(session_id)
        wanted = check_ids(ids)
        checked = check_guard(guard)
        stamp = check_marker(marker)
        # Checks first, then every change without an await: one atomic step on the loop.
        entry = self._metadata.get(checked.namespace, {}).get(checked.key)
        stored = None if entry is None else decode_metadata(entry.text)
        if not same_entry(stored, checked.expected):
            raise ArchiveConflict("guard", "the guard entry changed since the snapshot")
        active = {str(row.seq): row for row in self._active(session_id)}
        rows = [active.get(ident) for ident in wanted]
        if any(row is None for row in rows):
            raise ArchiveConflict("messages", "a message of the snapshot is no longer active")
        for row in rows:
            assert row is not None
            row.archived = True
        self._metadata.setdefault(checked.namespace, {})[checked.key] = _Entry(
            checked.text, now_ms()
        )
        if stamp is not None:
            self._insert(session_id, stamp)
        return len(rows)

    async def clear_all(self) -> None:
        self._sessions.clear()

    async def get_messages_by_session_range(
        self,
        session_id: str,
        from_ts: int,
        to_ts: int,
        roles: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] | None = None,
    ) -> list[Message]:
        check_session_id(session_id)
        low = check_timestamp(from_ts, "from_ts")
        high = check_timestamp(to_ts, "to_ts")
        wanted_roles = check_str_filter(roles, "roles")
        excluded = set(check_str_filter(exclude_kinds, "exclude_kinds") or ())
        found: list[Message] = []
        for row in self._rows(session_id):
            if len(found) >= self.range_query_limit:
                break
            if not low <= row.timestamp <= high:
                continue
            if wanted_roles and row.message.role not in wanted_roles:
                continue
            if row.message.kind is not None and row.message.kind in excluded:
                continue
            found.append(self._out(row))
        return found

    async def get_recent_messages_across_sessions(
        self, query: RecentMessagesQuery
    ) -> list[RecentMessageRecord]:
        check_recent_query(query)
        limit = min(check_limit(query.limit, DEFAULT_HISTORY_LIMIT), self.cross_session_max_limit)
        if limit == 0:
            return []
        roles = set(query.effective_roles)
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
        newest = matches[-int(limit) :] if limit != math.inf else matches
        return [RecentMessageRecord(session_id, self._out(row)) for row, session_id in newest]

    async def update_message_content(
        self,
        session_id: str,
        old_text: str,
        new_text: str,
        recent_limit: Limit | None = None,
    ) -> int:
        check_session_id(session_id)
        old, new = check_replacement(old_text, new_text)
        count = check_limit(recent_limit, DEFAULT_RECENT_LIMIT, "recent_limit")
        changed = 0
        for row in take_last(self._rows(session_id), count):
            content = row.message.content
            if isinstance(content, str) and old in content:
                row.message = attrs.evolve(row.message, content=content.replace(old, new))
                changed += 1
        return changed

    async def delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        check_session_id(session_id)
        doomed = set(check_timestamps(timestamps))
        rows = self._rows(session_id)
        kept = [row for row in rows if row.timestamp not in doomed]
        deleted = len(rows) - len(kept)
        if deleted:
            if kept:
                self._sessions[session_id] = kept
            else:
                del self._sessions[session_id]
        return deleted

    # -- extensions -----------------------------------------------------------------------

    async def list_sessions(self) -> list[SessionInfo]:
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

    async def export_session(self, session_id: str) -> list[StoredMessage]:
        check_session_id(session_id)
        return [StoredMessage(self._out(row), row.archived) for row in self._rows(session_id)]

    async def import_messages(self, session_id: str, records: Sequence[StoredMessage]) -> int:
        check_session_id(session_id)
        if isinstance(records, (str, bytes)):
            raise TypeError("records must be a sequence of StoredMessage")
        batch = list(records)
        for record in batch:
            if not isinstance(record, StoredMessage):
                raise TypeError(f"records must be StoredMessage, got {type(record).__name__}")
            check_message(record.message)
            if not isinstance(record.archived, bool):
                raise TypeError(f"StoredMessage.archived must be a bool, got {record.archived!r}")
        for record in batch:
            self._insert(session_id, record.message, record.archived)
        return len(batch)

    # -- metadata -------------------------------------------------------------------------

    async def save_metadata(self, namespace: str, key: str, data: dict[str, Any]) -> None:
        check_namespace(namespace)
        check_key(key)
        text = encode_metadata(data)
        self._metadata.setdefault(namespace, {})[key] = _Entry(text, now_ms())

    async def get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        check_namespace(namespace)
        check_key(key)
        entry = self._metadata.get(namespace, {}).get(key)
        if entry is None:
            return None
        data = decode_metadata(entry.text)
        if data is None:
            self._log().warning("unreadable metadata entry", namespace=namespace, key=key)
        return data

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]:
        check_namespace(namespace)
        entries = []
        for key, entry in sorted(self._metadata.get(namespace, {}).items()):
            data = decode_metadata(entry.text)
            if data is not None:
                entries.append(MetadataEntry(key=key, data=data, updated_at=entry.updated_at))
        return entries

    async def list_metadata_keys(self, namespace: str) -> list[str]:
        check_namespace(namespace)
        return sorted(self._metadata.get(namespace, {}))

    async def list_namespaces(self) -> list[str]:
        return sorted(namespace for namespace, entries in self._metadata.items() if entries)

    async def delete_metadata(self, namespace: str, key: str) -> None:
        check_namespace(namespace)
        check_key(key)
        self._delete(namespace, key)

    def _delete(self, namespace: str, key: str) -> None:
        entries = self._metadata.get(namespace)
        if entries is not None:
            entries.pop(key, None)
            if not entries:
                del self._metadata[namespace]

    async def commit_metadata(self, ops: Sequence[MetadataOp]) -> None:
        batch = encode_batch(ops)  # the whole batch is checked before anything is applied
        stamp = now_ms()
        for op, namespace, key, text in batch:
            if op == "put":
                assert text is not None
                self._metadata.setdefault(namespace, {})[key] = _Entry(text, stamp)
            else:
                self._delete(namespace, key)

    def put_raw_metadata(self, namespace: str, key: str, raw_text: str) -> None:
        """Store ``raw_text`` as is, unreadable or not: lets tests reproduce a corrupt entry."""
        self._metadata.setdefault(check_namespace(namespace), {})[check_key(key)] = _Entry(
            raw_text, now_ms()
        )


__all__ = ["InMemoryMemory"]
