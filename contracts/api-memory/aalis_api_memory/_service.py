"""``MemoryService`` and its optional groups: the shape every memory backend implements.

``MemoryService`` lists the required methods. The optional ones come in groups, one
``Protocol`` each (``FullHistory``, ``ClearAll``, ``CrossSession``, ``Rewrite``,
``MetadataKeys``, ``Transfer``, ``ExactArchiving``, ``MessagesById``, ``Leases``); a backend offers a group whole or
leaves it out. Every group extends ``MemoryService``, so a consumer writes::

    if supports(memory, FullHistory):
        total = await memory.count_history(session_id)  # the type checker knows both halves

``supports`` works on a bare store, on a capability handle's ``use`` and on the
``HeldMemory`` adapter (it looks attributes up the way those proxies delegate them), so a
consumer can degrade gracefully and the conformance kit can skip, with a reason, what a
backend leaves out, or fail when the backend declared it (docs/backends/implementing.md).
``OPTIONAL_METHODS`` is derived from the groups. ``FullMemoryService`` is every group at
once: what each backend of this repository implements. The rules of every method are in
docs/reference/memory-contract.md; the docstrings below are their summary.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeGuard, TypeVar, runtime_checkable

from aalis_schema_message import Message

from aalis_api_memory._types import (
    HistorySnapshot,
    MetadataEntry,
    MetadataGuard,
    MetadataOp,
    RecentMessageRecord,
    RecentMessagesQuery,
    SessionInfo,
    StoredMessage,
    StoredRecord,
)

Limit = int | float

G = TypeVar("G")


@runtime_checkable
class MemoryService(Protocol):
    """Per-session chat history with archiving, plus a metadata key/value store.

    Every method is async. Limits are a non-negative int or ``math.inf``; ``None`` means the
    method's default. Bad arguments raise ``TypeError``/``ValueError`` before anything is
    read or written, identically on every backend. The optional methods are in the groups
    below, not here. The rules: docs/reference/memory-contract.md ("General rules").
    """

    # -- history (docs/reference/memory-contract.md, "History methods") --------------------

    async def save_message(self, session_id: str, message: Message) -> None:
        """Append ``message`` to the session, losing none of its fields.

        A message without a timestamp is stored under "now" and one without an id gets a new
        id; an id the store already holds raises ``MessageIdConflict`` and writes nothing.
        While a clear holds the session the save waits and lands after the clear, so nothing
        said during a clear is lost.
        """
        ...

    async def get_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        """The last ``limit`` active conversation messages, oldest first (default 50).

        Only messages whose kind is not in ``CONTROL_KINDS`` count towards the limit; the
        markers between them come back too, so the result is every active message after the
        (limit+1)-th newest conversation message. Archived messages never appear; ``0``
        returns ``[]``. Order is ``(timestamp, insertion sequence)`` on every backend.
        """
        ...

    async def archive_span(self, session_id: str, count: Limit, keep: Sequence[int] = ()) -> int:
        """Archive the first ``count`` active messages but the span positions in ``keep``.

        Positions are those of ``get_history(session_id, math.inf)`` at call time, markers
        included; returns how many were archived. Archived messages leave ``get_history``
        but stay in the full history, ranges and exports. Positional, so only as exact as
        the caller's view: a caller that must archive exactly what it read uses the
        ``ExactArchiving`` group.
        """
        ...

    async def clear_session(self, session_id: str) -> None:
        """Remove the session's messages, active and archived; its metadata stays.

        A consumer that clears a conversation calls ``run_clear`` instead, so every plugin
        clears what it derived from it (docs/reference/memory-contract.md, "Clearing").
        """
        ...

    # -- metadata (docs/reference/memory-contract.md, "Metadata methods") ------------------

    async def save_metadata(self, namespace: str, key: str, data: dict[str, Any]) -> None:
        """Write the JSON object ``data`` under ``(namespace, key)``, replacing it whole.

        ``data`` must be a ``dict`` with ``str`` keys and JSON values; anything else raises
        ``TypeError``/``ValueError`` and writes nothing. The store keeps a copy.
        """
        ...

    async def get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        """The entry's data, or None when it is absent.

        An unreadable entry (corrupt, or not a JSON object) also reads as None, with a
        logged warning, so one bad entry never breaks its reader.
        """
        ...

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]:
        """``MetadataEntry(key, data, updated_at)`` for every readable entry, sorted by key.

        Unreadable entries are skipped (``MetadataKeys.list_metadata_keys`` lists them).
        """
        ...

    async def delete_metadata(self, namespace: str, key: str) -> None:
        """Delete the entry; a missing key is not an error."""
        ...

    async def commit_metadata(self, ops: Sequence[MetadataOp]) -> None:
        """Apply ``Put`` and ``Delete`` operations in order, as one batch.

        The whole batch is checked and serialised before anything is written, so non-JSON
        data anywhere in it raises and applies nothing, on every backend. With transactions
        the batch is all or nothing; MongoDB writes it as one ordered bulk write.
        """
        ...


# -- the optional groups ------------------------------------------------------------------


@runtime_checkable
class FullHistory(MemoryService, Protocol):
    """Reads of a session beyond ``get_history``'s window: its count and its archive."""

    async def count_history(self, session_id: str) -> int:
        """The number of active conversation messages (event markers do not count)."""
        ...

    async def get_full_history(self, session_id: str, limit: Limit | None = None) -> list[Message]:
        """Archived and active messages in order, the last ``limit`` (default 200).

        Event markers count towards the limit here, unlike in ``get_history``.
        """
        ...


@runtime_checkable
class ClearAll(MemoryService, Protocol):
    """One call that removes every session's history (``run_clear`` of scope ``all``)."""

    async def clear_all(self) -> None:
        """Remove every session's messages, archived included; metadata is untouched."""
        ...


@runtime_checkable
class CrossSession(MemoryService, Protocol):
    """Queries by time: in one session's whole history, or across every session."""

    async def get_messages_by_session_range(
        self,
        session_id: str,
        from_ts: int,
        to_ts: int,
        roles: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] | None = None,
    ) -> list[Message]:
        """Messages with ``from_ts <= timestamp <= to_ts``, archived included, ascending.

        At most the earliest ``range_query_limit`` (a backend setting, default 500).
        ``roles`` is a whitelist (None or empty: every role); ``exclude_kinds`` removes
        those kinds, never a message without a kind.
        """
        ...

    async def get_recent_messages_across_sessions(
        self, query: RecentMessagesQuery
    ) -> list[RecentMessageRecord]:
        """The newest matching active messages of every session, returned ascending.

        At most ``min(query.limit, cross_session_max_limit)`` (a backend setting, default
        1000); every filter of ``RecentMessagesQuery`` is applied in the query, so
        ``limit`` matches come back whenever they exist.
        """
        ...


@runtime_checkable
class Rewrite(MemoryService, Protocol):
    """Changes to stored messages: edit their text, delete them by timestamp (undo)."""

    async def update_message_content(
        self,
        session_id: str,
        old_text: str,
        new_text: str,
        recent_limit: Limit | None = None,
    ) -> int:
        """Replace literal, case-sensitive ``old_text`` in string contents; return how
        many messages changed.

        Only among the last ``recent_limit`` (default 100) of the full history; timestamps
        and order are kept; an empty ``old_text`` is a ``ValueError``. The caller emits
        ``memory_messages_rewritten``.
        """
        ...

    async def delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        """Delete every message of the session (archived too) whose timestamp is listed.

        Returns the number deleted. The caller emits ``memory_messages_deleted``.
        """
        ...


@runtime_checkable
class MetadataKeys(MemoryService, Protocol):
    """The metadata store's own listing: every key (unreadable ones too), every namespace."""

    async def list_metadata_keys(self, namespace: str) -> list[str]:
        """Every key of ``namespace``, unreadable entries included, sorted.

        Lets a clear delete entries it cannot read.
        """
        ...

    async def list_namespaces(self) -> list[str]:
        """Every metadata namespace that holds an entry, sorted."""
        ...


@runtime_checkable
class Transfer(MemoryService, Protocol):
    """The store's sessions, and each one out and back in with its archive flags
    (``aalis sessions``, ``export``, ``import``, ``migrate``)."""

    async def list_sessions(self) -> list[SessionInfo]:
        """Every session with its active and archived counts, newest first.

        Ordered by the timestamp of the session's last message of any kind (markers and
        archived messages included).
        """
        ...

    async def export_session(self, session_id: str) -> list[StoredMessage]:
        """The full history in order, each message with its ``archived`` flag."""
        ...

    async def import_messages(self, session_id: str, records: Sequence[StoredMessage]) -> int:
        """Append ``records`` in order, keeping flags and timestamps; return how many.

        A record without a timestamp gets "now"; all or nothing where the backend has
        transactions; a ``str`` or a ``Mapping`` is refused with ``TypeError``. Waits while
        the session is held, like ``save_message``.
        """
        ...


@runtime_checkable
class ExactArchiving(MemoryService, Protocol):
    """Archiving by identity, so a compression archives exactly what its summary covers.

    Both methods or neither; the full rules are in ``aalis_api_memory._exact`` and
    docs/reference/memory-contract.md ("Exact archiving").
    """

    async def history_snapshot(self, session_id: str) -> HistorySnapshot:
        """The active history (as ``get_history(sid, inf)``) with one opaque id per message,
        read together."""
        ...

    async def archive_exact(
        self,
        session_id: str,
        ids: Sequence[str],
        *,
        guard: MetadataGuard,
        marker: Message | None = None,
    ) -> int:
        """When ``guard`` still holds and every id is active, set the guard entry, archive
        exactly those messages and save ``marker``, in one commit; return how many were
        archived. Otherwise raise ``ArchiveConflict`` and change nothing."""
        ...


@runtime_checkable
class MessagesById(MemoryService, Protocol):
    """Messages by their id (``Message.id``): what every derived layer keys on.

    Two messages of one session may share a millisecond, so a vector, an undo or a fact
    names its message by id, and checks it against the store by id (docs/reference/
    memory-contract.md, "Message identity").
    """

    async def get_messages_by_ids(self, ids: Sequence[str]) -> list[StoredRecord]:
        """The stored messages with these ids, in any session, archived ones included.

        In the order of ``ids`` (a repeated id once); an id the store does not hold is left
        out, so a caller tells "deleted" by its absence.
        """
        ...

    async def delete_messages_by_ids(self, session_id: str, ids: Sequence[str]) -> int:
        """Delete the messages of ``session_id`` (archived too) whose id is listed.

        Ids of other sessions are left alone. Returns the number deleted. The caller emits
        ``memory_messages_deleted``.
        """
        ...


@runtime_checkable
class Leases(MemoryService, Protocol):
    """Named, expiring leases held in the store: one holder at a time, across processes.

    ``run_turn`` holds ``turn:<session id>`` so two processes never interleave a turn; the
    rules and the clock are in ``aalis_api_memory._leases`` and docs/reference/memory-contract.md
    ("Leases").
    """

    async def acquire_lease(self, name: str, holder: str, ttl_ms: int) -> bool:
        """Take (or renew, when ``holder`` already holds it) lease ``name`` for ``ttl_ms``;
        False, changing nothing, while another holder's lease has not expired. Atomic."""
        ...

    async def release_lease(self, name: str, holder: str) -> bool:
        """Give lease ``name`` up when ``holder`` holds it; False (nothing changed) otherwise."""
        ...


@runtime_checkable
class FullMemoryService(
    FullHistory,
    ClearAll,
    CrossSession,
    Rewrite,
    MetadataKeys,
    Transfer,
    ExactArchiving,
    MessagesById,
    Leases,
    Protocol,
):
    """Every required and optional method: each backend of this repository implements it."""


#: Every optional group, in the order of ``OPTIONAL_METHODS``.
OPTIONAL_GROUPS: tuple[type[MemoryService], ...] = (
    FullHistory,
    ClearAll,
    CrossSession,
    Rewrite,
    MetadataKeys,
    Transfer,
    ExactArchiving,
    MessagesById,
    Leases,
)


def _own_methods(cls: type) -> list[str]:
    if not getattr(cls, "_is_protocol", False) or cls is Protocol:
        return []
    return [
        name
        for name, value in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(value)
    ]


@functools.cache
def group_methods(group: object) -> tuple[str, ...]:
    """The optional method names ``group`` holds, in definition order (a combined Protocol
    such as ``FullMemoryService`` gives its groups' names in turn)."""
    if not isinstance(group, type) or not getattr(group, "_is_protocol", False):
        raise TypeError(f"expected an optional group (a Protocol class), got {group!r}")
    required = set(_own_methods(MemoryService))
    names: list[str] = []
    for cls in reversed(group.__mro__):
        for name in _own_methods(cls):
            if name not in required and name not in names:
                names.append(name)
    return tuple(names)


#: Methods a backend may leave out: every group's, derived from ``OPTIONAL_GROUPS``.
OPTIONAL_METHODS: tuple[str, ...] = tuple(
    name for group in OPTIONAL_GROUPS for name in group_methods(group)
)


def group_of(method: str) -> type[MemoryService]:
    """The optional group that holds ``method`` (``KeyError`` for a required or unknown name)."""
    for group in OPTIONAL_GROUPS:
        if method in group_methods(group):
            return group
    raise KeyError(method)


def missing_methods(service: object, group: object) -> tuple[str, ...]:
    """The methods of ``group`` that ``service`` lacks (no callable attribute of that name)."""
    return tuple(
        name for name in group_methods(group) if not callable(getattr(service, name, None))
    )


def supports(service: object, group: Callable[..., G], *methods: str) -> TypeGuard[G]:
    """True when ``service`` offers the methods of ``group`` it is asked about; narrows its
    type to the group.

    With no ``methods``, every method of the group is checked (what the conformance kit
    and a consumer of the whole group want). A consumer that calls one or two methods
    names them, ``supports(memory, Rewrite, "delete_messages_by_timestamps")``, and then
    calls only those: a backend that offers part of a group keeps working with every
    consumer, as it did when each optional method was detected on its own. A name that is
    not in the group raises ``TypeError`` (a typo would otherwise always answer False).

    Works on a bare store, on a handle's ``use`` and on ``HeldMemory``: it looks each
    method up with ``getattr``, which those proxies delegate, where ``isinstance`` on a
    runtime Protocol reads attributes statically on newer Pythons and would not see through
    them. A method set to ``None`` counts as absent; ``None`` itself supports nothing.

    ``group`` is typed ``Callable[..., G]`` rather than ``type[G]`` only because mypy
    refuses a Protocol class where ``type[G]`` is expected (its ``type-abstract`` check);
    anything but a Protocol class with methods raises ``TypeError``.
    """
    names = group_methods(group)
    if not names:
        raise TypeError(f"{getattr(group, '__name__', group)!r} has no method to check")
    unknown = [name for name in methods if name not in names]
    if unknown:
        raise TypeError(
            f"{getattr(group, '__name__', group)} has no method {', '.join(unknown)} "
            f"(it has {', '.join(names)})"
        )
    if service is None:
        return False
    wanted = methods or names
    return all(callable(getattr(service, name, None)) for name in wanted)


__all__ = [
    "OPTIONAL_GROUPS",
    "OPTIONAL_METHODS",
    "ClearAll",
    "CrossSession",
    "ExactArchiving",
    "FullHistory",
    "FullMemoryService",
    "Leases",
    "Limit",
    "MemoryService",
    "MessagesById",
    "MetadataKeys",
    "Rewrite",
    "Transfer",
    "group_methods",
    "group_of",
    "missing_methods",
    "supports",
]
