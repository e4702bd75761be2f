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

What the protected methods receive (checked, normalised values) is described in
``aalis_api_memory._checked``, which holds those values.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aalis_schema_message import Message, now_ms

from aalis_api_memory._checked import (
    UNBOUNDED,
    EncodedOp,
    ExactCommit,
    ImportRecord,
    RangeQuery,
    RecentQuery,
    Stamped,
    bounded,
    check_records,
    clamp,
    distinct,
    identified,
    stamp,
)
from aalis_api_memory._exact import (
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


class MemoryBackend(ABC):
    """The required methods of the memory contract, validated here, stored by the subclass.

    Each public method refuses bad input before the store is touched, answers what needs no
    storage (a limit of 0, an empty batch) itself, and passes checked values to its protected
    method (``aalis_api_memory._checked`` says what those may rely on). What each public
    method promises: docs/reference/memory-contract.md; its docstring here says what the
    base does before the backend's code runs.
    """

    # -- history ---------------------------------------------------------------------------

    async def save_message(self, session_id: str, message: Message) -> None:
        """Refuse a bad session id or message; stamp "now" and a new id where missing."""
        check_session_id(session_id)
        check_message(message)
        timestamp = message.timestamp if message.timestamp is not None else now_ms()
        await self._save_message(session_id, identified(message), timestamp)

    async def get_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        """Refuse a bad id or limit; a limit of 0 answers ``[]`` without reading."""
        check_session_id(session_id)
        checked = check_limit(limit, DEFAULT_HISTORY_LIMIT)
        if checked == 0:
            return []
        return await self._get_history(session_id, bounded(checked))

    async def archive_span(self, session_id: str, count: Limit, keep: Sequence[int] = ()) -> int:
        """Refuse a bad count or ``keep``; a count of 0 archives nothing without writing."""
        check_session_id(session_id)
        checked = check_count(count)
        positions = check_keep(keep)
        if checked == 0:
            return 0
        return await self._archive_span(session_id, bounded(checked), positions)

    async def clear_session(self, session_id: str) -> None:
        """Refuse a bad session id, then clear (metadata stays)."""
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
        """Refuse a bad namespace, key or non-JSON ``data``; store it encoded, timed now."""
        check_namespace(namespace)
        check_key(key)
        await self._save_metadata(namespace, key, encode_metadata(data), now_ms())

    async def get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        """Refuse a bad namespace or key, then read (unreadable reads as None)."""
        check_namespace(namespace)
        check_key(key)
        return await self._get_metadata(namespace, key)

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]:
        """Refuse a bad namespace, then list its readable entries by key."""
        check_namespace(namespace)
        return await self._list_metadata(namespace)

    async def delete_metadata(self, namespace: str, key: str) -> None:
        """Refuse a bad namespace or key, then delete (absent is not an error)."""
        check_namespace(namespace)
        check_key(key)
        await self._delete_metadata(namespace, key)

    async def commit_metadata(self, ops: Sequence[MetadataOp]) -> None:
        """Encode the whole batch first, so bad data anywhere writes nothing; an empty
        batch writes nothing.
        """
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
        """Refuse a bad session id, then count (markers do not count)."""
        check_session_id(session_id)
        return await self._count_history(session_id)

    async def get_full_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        """Refuse a bad id or limit (default 200); 0 answers ``[]`` without reading."""
        check_session_id(session_id)
        checked = check_limit(limit, DEFAULT_FULL_HISTORY_LIMIT)
        if checked == 0:
            return []
        return await self._get_full_history(session_id, bounded(checked))

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
        """Refuse bad bounds or filters; answer an impossible range with ``[]``, clamp the
        rest to 64 bits and de-duplicate the filters.
        """
        check_session_id(session_id)
        start = check_timestamp(from_ts, "from_ts")
        end = check_timestamp(to_ts, "to_ts")
        role_list = check_str_filter(roles, "roles")
        kind_list = check_str_filter(exclude_kinds, "exclude_kinds")
        if start > end or start > INT64_MAX or end < INT64_MIN:
            return []
        query = RangeQuery(
            from_ts=clamp(start),
            to_ts=clamp(end),
            roles=distinct(role_list),
            exclude_kinds=distinct(kind_list),
        )
        return await self._get_messages_by_session_range(session_id, query)

    async def get_recent_messages_across_sessions(
        self, query: RecentMessagesQuery
    ) -> list[RecentMessageRecord]:
        """Refuse a bad query; cap its limit by ``cross_session_max_limit`` and answer
        what cannot match (limit 0, an empty ``kinds``, a ``since_ts`` past 64 bits) with ``[]``.
        """
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
            kinds=distinct(query.kinds),
            exclude_kinds=distinct(query.exclude_kinds),
            since_ts=None if query.since_ts is None else clamp(query.since_ts),
            platform=query.platform,
            exclude_session_ids=distinct(query.exclude_session_ids),
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
        """Refuse a bad id, an empty ``old_text`` or a bad limit (default 100); 0 changes
        nothing.
        """
        check_session_id(session_id)
        old, new = check_replacement(old_text, new_text)
        checked = check_limit(recent_limit, DEFAULT_RECENT_LIMIT, "recent_limit")
        if checked == 0:
            return 0
        return await self._update_message_content(session_id, old, new, bounded(checked))

    async def delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        """Refuse bad timestamps; drop those outside 64 bits (nothing stored has them)."""
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
        """Clear every session's messages; metadata stays."""
        await self._clear_all()

    @abstractmethod
    async def _clear_all(self) -> None:
        """Delete every message of every session (metadata stays)."""


class WithMetadataKeys(ABC):
    """Optional group: ``list_metadata_keys`` and ``list_namespaces``."""

    async def list_metadata_keys(self, namespace: str) -> list[str]:
        """Refuse a bad namespace, then list every key, unreadable entries included."""
        check_namespace(namespace)
        return await self._list_metadata_keys(namespace)

    async def list_namespaces(self) -> list[str]:
        """Every namespace that holds an entry, sorted."""
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
        """Every session with its counts, newest first."""
        return await self._list_sessions()

    async def export_session(self, session_id: str) -> list[StoredMessage]:
        """Refuse a bad session id, then give the full history with archive flags."""
        check_session_id(session_id)
        return await self._export_session(session_id)

    async def import_messages(self, session_id: str, records: Sequence[StoredMessage]) -> int:
        """Check every record before writing any (ids and timestamps filled as a save
        does); an empty batch writes nothing.
        """
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
        """Refuse a bad session id, then read the active history and its ids together."""
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
        """Refuse bad ids, guard or marker before the store is touched; stamp the marker,
        then commit (``ArchiveConflict`` when the guard or an id no longer holds).
        """
        check_session_id(session_id)
        wanted = check_ids(ids)
        checked = check_guard(guard)
        marked = check_marker(marker)
        now = now_ms()
        commit = ExactCommit(
            ids=wanted,
            guard=checked,
            marker=None if marked is None else stamp(marked, now),
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
        """Refuse bad ids; give the found records in the order of ``ids``, a repeated id
        once, absent ones left out.
        """
        wanted = check_message_ids(ids)
        if not wanted:
            return []
        found = {record.message.id: record for record in await self._get_messages_by_ids(wanted)}
        return [found[i] for i in wanted if i in found]

    async def delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        """Refuse a bad session id or ids; an empty list deletes nothing."""
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
