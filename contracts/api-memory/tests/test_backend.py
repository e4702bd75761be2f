"""``MemoryBackend``: the optional groups are present exactly when listed, and the storage
methods receive checked, normalised values (the conformance kit covers the rest)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import pytest
from aalis_api_memory import (
    INT64_MAX,
    INT64_MIN,
    OPTIONAL_GROUPS,
    OPTIONAL_METHODS,
    OPTIONAL_MIXINS,
    UNBOUNDED,
    CompleteMemoryBackend,
    EncodedOp,
    HeldMemory,
    ImportRecord,
    MemoryBackend,
    MetadataEntry,
    RangeQuery,
    RecentMessagesQuery,
    RecentQuery,
    StoredMessage,
    WithCrossSession,
    WithFullHistory,
    WithRewrite,
    WithTransfer,
    group_methods,
)
from aalis_schema_message import Message


class Recording(MemoryBackend):
    """The required storage methods, each recording what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def _record(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        self._record("save", session_id, message, timestamp)

    async def _get_history(self, session_id: str, limit: int | float) -> list[Message]:
        self._record("history", session_id, limit)
        return []

    async def _archive_span(self, session_id: str, count: int | float, keep: frozenset[int]) -> int:
        self._record("archive", session_id, count, keep)
        return 0

    async def _clear_session(self, session_id: str) -> None:
        self._record("clear", session_id)

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        return None

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
        return []

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        self._record("commit", list(ops), updated_at)


class WithSome(Recording, WithCrossSession, WithRewrite, WithTransfer):
    range_query_limit = 500
    cross_session_max_limit = 7

    async def _get_messages_by_session_range(self, *args: Any) -> list[Message]:
        self._record("range", *args)
        return []

    async def _get_recent_messages_across_sessions(self, query: RecentQuery) -> list[Any]:
        self._record("recent", query)
        return []

    async def _update_message_content(self, *args: Any) -> int:
        self._record("rewrite", *args)
        return 0

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        self._record("delete", session_id, list(timestamps))
        return 0

    async def _list_sessions(self) -> list[Any]:
        return []

    async def _export_session(self, session_id: str) -> list[StoredMessage]:
        return []

    async def _import_messages(self, session_id: str, records: Sequence[ImportRecord]) -> int:
        self._record("import", session_id, list(records))
        return len(records)


def _public(group: type) -> set[str]:
    return {
        name for name in vars(group) if not name.startswith("_") and callable(vars(group)[name])
    }


def test_the_groups_are_the_optional_methods_each_once() -> None:
    names = [name for group in OPTIONAL_MIXINS for name in sorted(_public(group))]
    assert sorted(names) == sorted(OPTIONAL_METHODS)
    assert set(OPTIONAL_MIXINS) <= set(CompleteMemoryBackend.__mro__)


def test_each_mixin_is_its_contract_group_by_name_and_methods() -> None:
    # The base's mixins and the contract's Protocols are two views of one grouping: a method
    # added to a group must be added to both (docs/architecture.md, "How to change it").
    assert len(OPTIONAL_MIXINS) == len(OPTIONAL_GROUPS)
    for mixin, group in zip(OPTIONAL_MIXINS, OPTIONAL_GROUPS, strict=True):
        assert mixin.__name__ == f"With{group.__name__}"
        assert _public(mixin) == set(group_methods(group))


def test_a_group_not_listed_is_absent_also_through_the_hold_adapter() -> None:
    for store in (Recording(), HeldMemory(Recording())):
        assert [name for name in OPTIONAL_METHODS if hasattr(store, name)] == []
    some = WithSome()
    present = {name for name in OPTIONAL_METHODS if hasattr(some, name)}
    assert present == _public(WithCrossSession) | _public(WithRewrite) | _public(WithTransfer)


def test_a_listed_group_with_a_method_missing_cannot_be_built() -> None:
    class HalfThere(Recording, WithFullHistory):
        async def _count_history(self, session_id: str) -> int:
            return 0

    build: type[Any] = HalfThere  # the type checker already refuses to build it
    with pytest.raises(TypeError, match="_get_full_history"):
        build()


async def test_limits_reach_storage_checked_and_normalised() -> None:
    store = Recording()
    assert await store.get_history("s", 0) == []
    assert await store.archive_span("s", 0, [1]) == 0
    await store.get_history("s")
    await store.get_history("s", UNBOUNDED)
    await store.archive_span("s", math.inf, (2, 2, 0))
    assert store.calls == [
        ("history", ("s", 50)),
        ("history", ("s", math.inf)),
        ("archive", ("s", math.inf, frozenset({0, 2}))),
    ]
    with pytest.raises(ValueError, match="non-negative int"):
        await store.get_history("s", 2.0)
    with pytest.raises(TypeError):
        await store.archive_span("s", cast(Any, None))


async def test_saves_are_stamped_and_metadata_encoded() -> None:
    store = Recording()
    await store.save_message("s", Message(role="user", content="a", timestamp=5))
    await store.save_message("s", Message(role="user", content="b"))
    await store.save_metadata("ns", "k", {"x": (1, 2)})
    await store.commit_metadata([])
    [(_, (_, _, first)), (_, (_, unstamped, second)), (_, (ops, updated_at))] = store.calls
    assert first == 5
    assert unstamped.timestamp is None
    assert second > 0
    assert ops == [("put", "ns", "k", '{"x":[1,2]}')]
    assert updated_at > 0


async def test_optional_arguments_reach_storage_normalised() -> None:
    store = WithSome()
    assert await store.get_messages_by_session_range("s", 5, 4) == []
    assert await store.get_messages_by_session_range("s", INT64_MAX + 1, INT64_MAX + 2) == []
    await store.get_messages_by_session_range("s", -(2**70), 2**70, ["user", "user"], [])
    assert await store.get_recent_messages_across_sessions(RecentMessagesQuery(kinds=())) == []
    await store.get_recent_messages_across_sessions(
        RecentMessagesQuery(limit=math.inf, since_ts=-(2**70), exclude_kinds=())
    )
    assert await store.update_message_content("s", "a", "b", 0) == 0
    assert await store.delete_messages_by_timestamps("s", [2**70]) == 0
    await store.delete_messages_by_timestamps("s", [3, 1, 3, -(2**64)])
    with pytest.raises(TypeError):
        await store.import_messages("s", cast(Any, {}))
    assert await store.import_messages("s", []) == 0
    await store.import_messages("s", [StoredMessage(Message(role="user", content="x"), True)])
    range_call, recent, delete, imported = store.calls
    assert range_call == (
        "range",
        ("s", RangeQuery(from_ts=INT64_MIN, to_ts=INT64_MAX, roles=("user",), exclude_kinds=None)),
    )
    query = recent[1][0]
    assert (query.limit, query.roles, query.exclude_kinds, query.since_ts) == (
        7,
        ("user", "assistant"),
        None,
        INT64_MIN,
    )
    assert delete == ("delete", ("s", [1, 3]))
    [record] = imported[1][1]
    assert record.archived is True
    assert record.timestamp > 0
