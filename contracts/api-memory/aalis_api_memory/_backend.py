"""``MemoryBackend``: the front half of every memory backend, written once.

Every backend has to refuse bad input the same way, before anything is read or written, and
apply the same defaults and short-circuits (``get_history(s, 0) == []``, a ``commit_metadata``
of nothing writes nothing, ...). Written per backend, those checks drifted (one backend took a
``Mapping`` of records, another an ``Iterable`` of timestamps). So the contract's public
methods live here: each one validates and normalises its arguments with
``aalis_api_memory._validation`` and then calls a *protected* storage method (``_get_history``,
``_archive_span``, ...) that receives only checked, normalised values and does nothing but
storage. A backend subclasses ``MemoryBackend`` and implements the protected methods; the
walk-through is docs/backends/implementing.md.

**Optional methods** come in groups, one mixin per group of the contract (``WithFullHistory``,
``WithClearAll``, ``WithCrossSession``, ``WithRewrite``, ``WithMetadataKeys``, ``WithTransfer``,
``WithExactArchiving``, ``WithMessagesById``, ``WithLeases``: the group's name after ``With``, with the same methods). A backend
lists the mixins of the groups it implements, and each mixin's protected methods are
abstract, so a backend that names a group but misses one of its methods cannot be
instantiated. A group a backend does not list is simply absent:
``hasattr(store, "count_history")`` stays False, which is how ``supports(store, FullHistory)``
(consumers) and the conformance kit (a group the test class does not declare in
``implements`` skips) tell. (The alternative, one base with every public method wired in
``__init_subclass__`` when the protected one exists, would hide the public methods from the
type checker; mixins keep them visible and typed.) ``CompleteMemoryBackend`` is the base
with every group, what the backends of this repository use.

What the protected methods may rely on (beyond the types):

* limits are a positive ``int`` below ``UNBOUNDED`` or ``math.inf`` (a limit of 0 never
  reaches them, and absurdly large ones arrive as ``math.inf``);
* a message to store comes with the timestamp to store it under: its own, or ``now_ms()``
  when it had none; and it always carries an id (its own, or a new one from
  ``new_message_id()``), which the backend stores so that every read returns it and
  ``get_messages_by_ids`` finds it; an id the store already holds must raise
  ``MessageIdConflict`` and write nothing (a unique index does it);
* metadata arrives encoded as JSON text (``encode_metadata``), with the write time;
* timestamps, roles and kinds arrive distinct, within 64 bits, and never empty (an empty
  filter arrives as None; a call that cannot match anything is answered before).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import attrs
from aalis_schema_message import Message, new_message_id, now_ms

from aalis_api_memory._exact import (
    CheckedGuard,
    HistorySnapshot,
    MetadataGuard,
    check_guard,
    check_ids,
    check_marker,
)
from aalis_api_memory._leases import WithLeases
from aalis_api_memory._types import (
    MetadataEntry,
    MetadataOp,
    RecentMessageRecord,
    RecentMessagesQuery,
    SessionInfo,
    StoredMessage,
    StoredRecord,
)
from aalis_api_memory._validation import (
    DEFAULT_CROSS_SESSION_MAX_LIMIT,
    DEFAULT_FULL_HISTORY_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    DEFAULT_RANGE_QUERY_LIMIT,
    DEFAULT_RECENT_LIMIT,
    INT64_MAX,
    INT64_MIN,
    Limit,
    check_count,
    check_keep,
    check_key,
    check_limit,
    check_message,
    check_message_ids,
    check_namespace,
    check_recent_query,
    check_replacement,
    check_session_id,
    check_str_filter,
    check_timestamp,
    check_timestamps,
    encode_batch,
    encode_metadata,
)

#: A limit this large means "everything": no store holds that many messages, and the
#: databases' own limits (SQLite, PostgreSQL, BSON) stop at int64.
UNBOUNDED = 2**62

#: One operation of a checked ``commit_metadata`` batch: ``(op, namespace, key, text)``, op
#: being "put" (text: the JSON data) or "delete" (text: None).
EncodedOp = tuple[str, str, str, str | None]


class Stamped(NamedTuple):
    """A message to store and the timestamp to store it under (its own, or the call's time)."""

    message: Message
    timestamp: int


class ImportRecord(NamedTuple):
    """A checked ``StoredMessage`` of ``import_messages``, stamped like a save."""

    message: Message
    timestamp: int
    archived: bool


@attrs.frozen(kw_only=True)
class RangeQuery:
    """A checked ``get_messages_by_session_range``, as ``_get_messages_by_session_range`` gets it.

    ``from_ts <= to_ts``, both within 64 bits (a range beyond them is clamped, one that cannot
    match is answered before); ``roles`` and ``exclude_kinds`` are None or non-empty and
    distinct. The result is capped by ``range_query_limit`` (the earliest N).
    """

    from_ts: int
    to_ts: int
    roles: tuple[str, ...] | None
    exclude_kinds: tuple[str, ...] | None


@attrs.frozen(kw_only=True)
class ExactCommit:
    """A checked ``archive_exact``, as ``_archive_exact`` gets it.

    ``ids`` are distinct and non-empty strings; ``guard`` holds the expected value normalised
    to JSON types and the new data encoded; ``marker`` is stamped like a save; ``updated_at``
    is the guard entry's write time.
    """

    ids: tuple[str, ...]
    guard: CheckedGuard
    marker: Stamped | None
    updated_at: int


@attrs.frozen(kw_only=True)
class RecentQuery:
    """A checked ``RecentMessagesQuery``, as ``_get_recent_messages_across_sessions`` gets it.

    ``limit`` is already capped by ``cross_session_max_limit``; ``roles`` are the effective
    roles; every tuple holds distinct values; ``kinds`` is None (any kind) or a non-empty
    whitelist; ``exclude_kinds`` and ``exclude_session_ids`` are None or non-empty;
    ``since_ts`` (inclusive) fits in 64 bits.
    """

    limit: int
    roles: tuple[str, ...]
    kinds: tuple[str, ...] | None
    exclude_kinds: tuple[str, ...] | None
    since_ts: int | None
    platform: str | None
    exclude_session_ids: tuple[str, ...] | None


def _bounded(limit: Limit) -> Limit:
    return math.inf if limit >= UNBOUNDED else limit


def _distinct(values: Iterable[str] | None) -> tuple[str, ...] | None:
    """Distinct values in first-seen order; None for None and for an empty filter."""
    if not values:
        return None
    return tuple(dict.fromkeys(values))


def _clamp(timestamp: int) -> int:
    return max(INT64_MIN, min(INT64_MAX, timestamp))


def identified(message: Message) -> Message:
    """``message`` with an id: its own, or a new one (what every store keeps)."""
    return message if message.id is not None else message.with_id(new_message_id())


def _stamp(message: Message, now: int) -> Stamped:
    return Stamped(identified(message), now if message.timestamp is None else message.timestamp)


def check_records(records: object) -> list[ImportRecord]:
    """The ``records`` of ``import_messages``, checked whole and stamped with one time."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise TypeError(
            f"records must be a sequence of StoredMessage, got {type(records).__name__}"
        )
    checked: list[ImportRecord] = []
    now = now_ms()
    for record in list(records):
        if not isinstance(record, StoredMessage):
            raise TypeError(f"records must hold StoredMessage items, got {type(record).__name__}")
        message = identified(check_message(record.message))
        if not isinstance(record.archived, bool):
            raise TypeError(
                f"StoredMessage.archived must be a bool, got {type(record.archived).__name__}"
            )
        timestamp = message.timestamp if message.timestamp is not None else now
        checked.append(ImportRecord(message, timestamp, record.archived))
    return checked


class MemoryBackend(ABC):
    """The required methods of the memory contract, validated here, stored by the subclass.

    See the module docstring for what each protected method may rely on, and
    docs/reference/memory-contract.md for what each public method promises.
    """

    # -- history ---------------------------------------------------------------------------

    async def save_message(self, session_id: str, message: Message) -> None:
        check_session_id(session_id)
        check_message(message)
        timestamp = message.timestamp if message.timestamp is not None else now_ms()
        await self._save_message(session_id, identified(message), timestamp)

    async def get_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        check_session_id(session_id)
        checked = check_limit(limit, DEFAULT_HISTORY_LIMIT)
        if checked == 0:
            return []
        return await self._get_history(session_id, _bounded(checked))

    async def archive_span(self, session_id: str, count: Limit, keep: Sequence[int] = ()) -> int:
        check_session_id(session_id)
        checked = check_count(count)
        positions = check_keep(keep)
        if checked == 0:
            return 0
        return await self._archive_span(session_id, _bounded(checked), positions)

    async def clear_session(self, session_id: str) -> None:
        check_session_id(session_id)
        await self._clear_session(session_id)

    @abstractmethod
    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        """Store ``message`` under ``timestamp`` (``message.timestamp`` may be None; its id is
        set). An id already stored raises ``MessageIdConflict``."""

    @abstractmethod
    async def _get_history(self, session_id: str, limit: Limit) -> list[Message]:
        """The active messages after the (limit+1)-th newest conversation message."""

    @abstractmethod
    async def _archive_span(self, session_id: str, count: Limit, keep: frozenset[int]) -> int:
        """Archive the first ``count`` active messages but the positions in ``keep``."""

    @abstractmethod
    async def _clear_session(self, session_id: str) -> None:
        """Delete every message of the session, archived ones included."""

    # -- metadata --------------------------------------------------------------------------

    async def save_metadata(self, namespace: str, key: str, data: dict[str, Any]) -> None:
        check_namespace(namespace)
        check_key(key)
        await self._save_metadata(namespace, key, encode_metadata(data), now_ms())

    async def get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        check_namespace(namespace)
        check_key(key)
        return await self._get_metadata(namespace, key)

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]:
        check_namespace(namespace)
        return await self._list_metadata(namespace)

    async def delete_metadata(self, namespace: str, key: str) -> None:
        check_namespace(namespace)
        check_key(key)
        await self._delete_metadata(namespace, key)

    async def commit_metadata(self, ops: Sequence[MetadataOp]) -> None:
        encoded = encode_batch(ops)  # the whole batch, before anything is written
        if encoded:
            await self._commit_metadata(encoded, now_ms())

    async def _save_metadata(self, namespace: str, key: str, text: str, updated_at: int) -> None:
        """Write one entry; by default a batch of one (override when a single write is cheaper)."""
        await self._commit_metadata([("put", namespace, key, text)], updated_at)

    @abstractmethod
    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        """The entry's data; None when absent, or unreadable (log a warning then)."""

    @abstractmethod
    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        """The namespace's readable entries, by key."""

    async def _delete_metadata(self, namespace: str, key: str) -> None:
        """Delete one entry; by default a batch of one (override when a single write is cheaper)."""
        await self._commit_metadata([("delete", namespace, key, None)], now_ms())

    @abstractmethod
    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        """Apply a non-empty batch in order, all or nothing."""


class WithFullHistory(ABC):
    """Optional group: ``count_history`` and ``get_full_history``."""

    async def count_history(self, session_id: str) -> int:
        check_session_id(session_id)
        return await self._count_history(session_id)

    async def get_full_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        check_session_id(session_id)
        checked = check_limit(limit, DEFAULT_FULL_HISTORY_LIMIT)
        if checked == 0:
            return []
        return await self._get_full_history(session_id, _bounded(checked))

    @abstractmethod
    async def _count_history(self, session_id: str) -> int:
        """The number of active conversation messages (markers not counted)."""

    @abstractmethod
    async def _get_full_history(self, session_id: str, limit: Limit) -> list[Message]:
        """The newest ``limit`` messages, archived ones included, oldest first."""


class WithCrossSession(ABC):
    """Optional group: ``get_messages_by_session_range`` and the cross-session query.

    The two caps are attributes of the store (the conformance kit reads them). They default
    to the contract's defaults, so a backend that lists this mixin and sets neither still
    works; the backends here set both from their config.
    """

    #: The cap of ``get_messages_by_session_range`` (the earliest N of the range).
    range_query_limit: int = DEFAULT_RANGE_QUERY_LIMIT
    #: The cap of ``get_recent_messages_across_sessions``.
    cross_session_max_limit: int = DEFAULT_CROSS_SESSION_MAX_LIMIT

    async def get_messages_by_session_range(
        self,
        session_id: str,
        from_ts: int,
        to_ts: int,
        roles: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] | None = None,
    ) -> list[Message]:
        check_session_id(session_id)
        start = check_timestamp(from_ts, "from_ts")
        end = check_timestamp(to_ts, "to_ts")
        role_list = check_str_filter(roles, "roles")
        kind_list = check_str_filter(exclude_kinds, "exclude_kinds")
        if start > end or start > INT64_MAX or end < INT64_MIN:
            return []
        query = RangeQuery(
            from_ts=_clamp(start),
            to_ts=_clamp(end),
            roles=_distinct(role_list),
            exclude_kinds=_distinct(kind_list),
        )
        return await self._get_messages_by_session_range(session_id, query)

    async def get_recent_messages_across_sessions(
        self, query: RecentMessagesQuery
    ) -> list[RecentMessageRecord]:
        check_recent_query(query)
        limit = check_limit(query.limit, DEFAULT_HISTORY_LIMIT, "query.limit")
        count = int(min(limit, self.cross_session_max_limit))
        if count == 0:
            return []
        if query.kinds is not None and not query.kinds:
            return []  # an empty whitelist admits nothing
        if query.since_ts is not None and query.since_ts > INT64_MAX:
            return []  # no stored timestamp is that late
        checked = RecentQuery(
            limit=count,
            roles=tuple(dict.fromkeys(query.effective_roles)),
            kinds=_distinct(query.kinds),
            exclude_kinds=_distinct(query.exclude_kinds),
            since_ts=None if query.since_ts is None else _clamp(query.since_ts),
            platform=query.platform,
            exclude_session_ids=_distinct(query.exclude_session_ids),
        )
        return await self._get_recent_messages_across_sessions(checked)

    @abstractmethod
    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        """The earliest ``range_query_limit`` matches, archived ones included, in order."""

    @abstractmethod
    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        """The newest ``query.limit`` active matches of every session, oldest first."""


class WithRewrite(ABC):
    """Optional group: ``update_message_content`` and ``delete_messages_by_timestamps``."""

    async def update_message_content(
        self, session_id: str, old_text: str, new_text: str, recent_limit: Limit | None = None
    ) -> int:
        check_session_id(session_id)
        old, new = check_replacement(old_text, new_text)
        checked = check_limit(recent_limit, DEFAULT_RECENT_LIMIT, "recent_limit")
        if checked == 0:
            return 0
        return await self._update_message_content(session_id, old, new, _bounded(checked))

    async def delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        check_session_id(session_id)
        values = check_timestamps(timestamps)
        wanted = sorted({ts for ts in values if INT64_MIN <= ts <= INT64_MAX})
        if not wanted:
            return 0  # nothing stored can carry a timestamp outside 64 bits
        return await self._delete_messages_by_timestamps(session_id, wanted)

    @abstractmethod
    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        """Replace ``old`` by ``new`` in the string contents of the newest ``recent_limit``."""

    @abstractmethod
    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        """Delete the session's messages (archived too) whose timestamp is listed."""


class WithClearAll(ABC):
    """Optional group: ``clear_all``."""

    async def clear_all(self) -> None:
        await self._clear_all()

    @abstractmethod
    async def _clear_all(self) -> None:
        """Delete every message of every session (metadata stays)."""


class WithMetadataKeys(ABC):
    """Optional group: ``list_metadata_keys`` and ``list_namespaces``."""

    async def list_metadata_keys(self, namespace: str) -> list[str]:
        check_namespace(namespace)
        return await self._list_metadata_keys(namespace)

    async def list_namespaces(self) -> list[str]:
        return await self._list_namespaces()

    @abstractmethod
    async def _list_metadata_keys(self, namespace: str) -> list[str]:
        """Every key of the namespace, unreadable entries included, sorted."""

    @abstractmethod
    async def _list_namespaces(self) -> list[str]:
        """Every namespace holding at least one entry, sorted."""


class WithTransfer(ABC):
    """Optional group: ``list_sessions``, ``export_session`` and ``import_messages``."""

    async def list_sessions(self) -> list[SessionInfo]:
        return await self._list_sessions()

    async def export_session(self, session_id: str) -> list[StoredMessage]:
        check_session_id(session_id)
        return await self._export_session(session_id)

    async def import_messages(self, session_id: str, records: Sequence[StoredMessage]) -> int:
        check_session_id(session_id)
        checked = check_records(records)
        if not checked:
            return 0
        return await self._import_messages(session_id, checked)

    @abstractmethod
    async def _list_sessions(self) -> list[SessionInfo]:
        """Every session, the most recent first (ties by session id)."""

    @abstractmethod
    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        """Every message of the session in order, each with its archived flag."""

    @abstractmethod
    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        """Insert a non-empty batch, all or nothing; returns how many."""


class WithExactArchiving(ABC):
    """Optional group: ``history_snapshot`` and ``archive_exact`` (aalis_api_memory._exact)."""

    async def history_snapshot(self, session_id: str) -> HistorySnapshot:
        check_session_id(session_id)
        return await self._history_snapshot(session_id)

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
        now = now_ms()
        commit = ExactCommit(
            ids=wanted,
            guard=checked,
            marker=None if stamp is None else _stamp(stamp, now),
            updated_at=now,
        )
        return await self._archive_exact(session_id, commit)

    @abstractmethod
    async def _history_snapshot(self, session_id: str) -> HistorySnapshot:
        """The active history and one identity per message, read together."""

    @abstractmethod
    async def _archive_exact(self, session_id: str, commit: ExactCommit) -> int:
        """Compare the guard, archive exactly ``commit.ids``, write the guard, save the marker.

        Raise ``ArchiveConflict`` and change nothing when the guard or an id no longer
        matches.
        """


class WithMessagesById(ABC):
    """Optional group: ``get_messages_by_ids`` and ``delete_messages_by_ids``."""

    async def get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        wanted = check_message_ids(ids)
        if not wanted:
            return []
        found = {record.message.id: record for record in await self._get_messages_by_ids(wanted)}
        return [found[i] for i in wanted if i in found]

    async def delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        check_session_id(session_id)
        wanted = check_message_ids(ids)
        if not wanted:
            return 0
        return await self._delete_messages_by_ids(session_id, wanted)

    @abstractmethod
    async def _get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        """The records of the stored messages among ``ids`` (distinct), in any order."""

    @abstractmethod
    async def _delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        """Delete the session's messages (archived too) among ``ids`` (distinct); how many."""


class CompleteMemoryBackend(
    MemoryBackend,
    WithFullHistory,
    WithCrossSession,
    WithRewrite,
    WithClearAll,
    WithMetadataKeys,
    WithTransfer,
    WithExactArchiving,
    WithMessagesById,
    WithLeases,
):
    """A backend with every optional group: implement every protected method."""


if TYPE_CHECKING:
    from aalis_api_memory._service import FullMemoryService

    def _signatures_match(backend: CompleteMemoryBackend) -> FullMemoryService:
        # Checked by mypy, never run: a public method of the base whose signature drifts
        # from the contract's Protocol fails the type check here, before any backend does.
        return backend


#: One mixin per optional group, in the order of ``OPTIONAL_METHODS``.
OPTIONAL_MIXINS: tuple[type[ABC], ...] = (
    WithFullHistory,
    WithClearAll,
    WithCrossSession,
    WithRewrite,
    WithMetadataKeys,
    WithTransfer,
    WithExactArchiving,
    WithMessagesById,
    WithLeases,
)

__all__ = [
    "OPTIONAL_MIXINS",
    "UNBOUNDED",
    "CompleteMemoryBackend",
    "EncodedOp",
    "ExactCommit",
    "ImportRecord",
    "MemoryBackend",
    "RangeQuery",
    "RecentQuery",
    "Stamped",
    "WithClearAll",
    "WithCrossSession",
    "WithExactArchiving",
    "WithFullHistory",
    "WithLeases",
    "WithMessagesById",
    "WithMetadataKeys",
    "WithRewrite",
    "WithTransfer",
    "check_records",
    "identified",
]
