"""Conformance: ``get_messages_by_session_range`` and ``get_recent_messages_across_sessions``."""

from __future__ import annotations

from typing import Any

import pytest
from aalis_api_memory import FullMemoryService, RecentMessageRecord, RecentMessagesQuery
from aalis_schema_message import Message

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    MARKER,
    T0,
    conformance,
    cross_session_max_limit,
    full_message,
    marker,
    msg,
    range_query_limit,
    texts,
)

RANGE = "get_messages_by_session_range"
CROSS = "get_recent_messages_across_sessions"


_RANGE_LAYOUT = ["u0", "a1", "u2", "M3", "a4", "u5", "a6", "t7", "u8", "a9"]


async def _range_session(memory: FullMemoryService) -> None:
    # ts 0..9 as in _RANGE_LAYOUT; u5 has kind "note"; the first four are archived.
    for i, label in enumerate(_RANGE_LAYOUT):
        if label[0] == "M":
            message = marker(label, ts=i)
        elif label[0] == "t":
            message = msg(label, role="tool", ts=i, tool_call_id="c")
        else:
            role = "user" if label[0] == "u" else "assistant"
            message = msg(label, role=role, ts=i, kind="note" if label == "u5" else None)
        await memory.save_message("s", message)
    await memory.save_message("other", msg("other", ts=4))
    await memory.archive_span("s", 4)


def _records(records: list[RecentMessageRecord]) -> list[tuple[str, str | None]]:
    return [(record.session_id, record.message.content) for record in records]


@conformance
class RangeQueryConformance(ConformanceBase):
    async def test_range_is_inclusive_ascending_and_includes_archived(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, RANGE)
        await _range_session(memory)
        found = await memory.get_messages_by_session_range("s", T0 + 2, T0 + 5)
        assert texts(found) == ["u2", "M3", "a4", "u5"]

    async def test_range_of_a_single_instant(self, memory: FullMemoryService) -> None:
        self.require(memory, RANGE)
        await _range_session(memory)
        assert texts(await memory.get_messages_by_session_range("s", T0 + 6, T0 + 6)) == ["a6"]

    async def test_range_roles_is_a_whitelist(self, memory: FullMemoryService) -> None:
        self.require(memory, RANGE)
        await _range_session(memory)
        get = memory.get_messages_by_session_range
        assert texts(await get("s", T0, T0 + 9, roles=["assistant"])) == ["a1", "a4", "a6", "a9"]
        assert texts(await get("s", T0, T0 + 9, roles=("tool", "notice"))) == ["M3", "t7"]
        every = _RANGE_LAYOUT
        assert texts(await get("s", T0, T0 + 9, roles=None)) == every
        assert texts(await get("s", T0, T0 + 9, roles=[])) == every

    async def test_range_exclude_kinds_never_excludes_kindless(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, RANGE)
        await _range_session(memory)
        get = memory.get_messages_by_session_range
        found = await get("s", T0, T0 + 9, exclude_kinds=[MARKER, "note"])
        assert texts(found) == ["u0", "a1", "u2", "a4", "a6", "t7", "u8", "a9"]
        assert len(await get("s", T0, T0 + 9, exclude_kinds=[])) == 10
        assert len(await get("s", T0, T0 + 9, exclude_kinds=["", "none", "null"])) == 10

    async def test_range_roles_and_exclude_kinds_combine(self, memory: FullMemoryService) -> None:
        self.require(memory, RANGE)
        await _range_session(memory)
        found = await memory.get_messages_by_session_range(
            "s", T0, T0 + 9, roles=["user"], exclude_kinds=["note"]
        )
        assert texts(found) == ["u0", "u2", "u8"]
        found = await memory.get_messages_by_session_range("s", T0, T0 + 9, roles=["user"])
        assert texts(found) == ["u0", "u2", "u5", "u8"]

    async def test_range_never_reaches_other_sessions(self, memory: FullMemoryService) -> None:
        self.require(memory, RANGE)
        await _range_session(memory)
        assert texts(await memory.get_messages_by_session_range("other", T0, T0 + 9)) == ["other"]
        assert await memory.get_messages_by_session_range("nobody", T0, T0 + 9) == []

    async def test_empty_or_inverted_range(self, memory: FullMemoryService) -> None:
        self.require(memory, RANGE)
        await _range_session(memory)
        assert await memory.get_messages_by_session_range("s", T0 + 5, T0 + 4) == []
        assert await memory.get_messages_by_session_range("s", T0 + 100, T0 + 200) == []

    async def test_range_returns_the_earliest_range_query_limit(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, RANGE)
        cap = range_query_limit(memory)
        for i in range(cap + 7):
            await memory.save_message("s", msg(f"m{i}", ts=cap + 7 - i if i < 3 else i))
        found = await memory.get_messages_by_session_range("s", T0, T0 + 10 * cap)
        assert len(found) == cap
        everything = await memory.get_history("s", INF)
        assert found == everything[:cap]

    async def test_range_round_trips_every_field(self, memory: FullMemoryService) -> None:
        self.require(memory, RANGE)
        saved = full_message(ts=0)
        await memory.save_message("s", saved)
        assert await memory.get_messages_by_session_range("s", T0, T0) == [saved]

    @pytest.mark.parametrize(
        "args",
        [
            {"from_ts": str(T0), "to_ts": T0},
            {"from_ts": T0, "to_ts": float(T0)},
            {"from_ts": T0, "to_ts": None},
            {"from_ts": T0, "to_ts": T0, "roles": "user"},
            {"from_ts": T0, "to_ts": T0, "roles": [1]},
            {"from_ts": T0, "to_ts": T0, "exclude_kinds": "x"},
        ],
        ids=["str-from", "float-to", "none-to", "roles-str", "roles-int", "exclude-str"],
    )
    async def test_range_bad_arguments_raise_type_error(
        self, memory: FullMemoryService, args: Any
    ) -> None:
        self.require(memory, RANGE)
        with pytest.raises(TypeError):
            await memory.get_messages_by_session_range("s", **args)


async def _cross_sessions(memory: FullMemoryService) -> None:
    # Three sessions with interleaved timestamps; every role, kinds and platforms mixed.
    plan: list[tuple[str, Message]] = [
        ("a", msg("a-u0", ts=0, metadata={"platform": "qq"})),
        ("b", msg("b-a1", role="assistant", ts=1, metadata={"platform": "tg"})),
        ("c", msg("c-s2", role="system", ts=2)),
        ("a", msg("a-t3", role="tool", ts=3, tool_call_id="x")),
        ("b", msg("b-u4", ts=4, kind="note", metadata={"platform": "qq"})),
        ("c", marker("c-M5", ts=5)),
        ("a", msg("a-a6", role="assistant", ts=6, kind="reply")),
        ("b", msg("b-u7", ts=7, metadata={"other": "qq"})),
        ("c", msg("c-u8", ts=8, metadata={"platform": "qq"})),
        ("a", msg("a-n9", role="notice", ts=9)),
    ]
    for session_id, message in plan:
        await memory.save_message(session_id, message)


@conformance
class CrossSessionConformance(ConformanceBase):
    async def _query(
        self, memory: FullMemoryService, **fields: Any
    ) -> list[tuple[str, str | None]]:
        return _records(
            await memory.get_recent_messages_across_sessions(RecentMessagesQuery(**fields))
        )

    async def test_default_roles_are_user_and_assistant(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        expected = [
            ("a", "a-u0"),
            ("b", "b-a1"),
            ("b", "b-u4"),
            ("a", "a-a6"),
            ("b", "b-u7"),
            ("c", "c-u8"),
        ]
        assert await self._query(memory, limit=100) == expected
        assert await self._query(memory, limit=100, roles=()) == expected

    async def test_roles_whitelist(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        assert await self._query(memory, limit=100, roles=["tool", "notice"]) == [
            ("a", "a-t3"),
            ("c", "c-M5"),
            ("a", "a-n9"),
        ]

    async def test_newest_n_matching_returned_ascending(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        assert await self._query(memory, limit=3) == [("a", "a-a6"), ("b", "b-u7"), ("c", "c-u8")]
        assert await self._query(memory, limit=1) == [("c", "c-u8")]
        assert await self._query(memory, limit=0) == []
        assert len(await self._query(memory, limit=INF)) == 6

    async def test_kinds_whitelist_excludes_kindless(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        assert await self._query(memory, limit=100, kinds=["note", "reply"]) == [
            ("b", "b-u4"),
            ("a", "a-a6"),
        ]
        assert await self._query(memory, limit=100, kinds=[]) == []

    async def test_exclude_kinds_wins_and_keeps_kindless(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        assert await self._query(
            memory, limit=100, kinds=["note", "reply"], exclude_kinds=["note"]
        ) == [
            ("a", "a-a6"),
        ]
        assert await self._query(memory, limit=100, exclude_kinds=["note", "reply"]) == [
            ("a", "a-u0"),
            ("b", "b-a1"),
            ("b", "b-u7"),
            ("c", "c-u8"),
        ]

    async def test_since_ts_is_inclusive(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        assert await self._query(memory, limit=100, since_ts=T0 + 6) == [
            ("a", "a-a6"),
            ("b", "b-u7"),
            ("c", "c-u8"),
        ]

    async def test_platform_filter_matches_metadata_platform(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        assert await self._query(memory, limit=100, platform="qq") == [
            ("a", "a-u0"),
            ("b", "b-u4"),
            ("c", "c-u8"),
        ]
        assert await self._query(memory, limit=100, platform="nowhere") == []

    async def test_exclude_session_ids(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        assert await self._query(memory, limit=100, exclude_session_ids=["b", "c"]) == [
            ("a", "a-u0"),
            ("a", "a-a6"),
        ]

    async def test_archived_messages_are_excluded(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        await memory.archive_span("a", 2)  # a-u0, a-t3
        await memory.archive_span("b", 1)  # b-a1
        assert await self._query(memory, limit=100) == [
            ("b", "b-u4"),
            ("a", "a-a6"),
            ("b", "b-u7"),
            ("c", "c-u8"),
        ]

    async def test_all_filters_together(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        await _cross_sessions(memory)
        found = await self._query(
            memory,
            limit=1,
            roles=["user"],
            exclude_kinds=["note"],
            platform="qq",
            since_ts=T0 + 1,
            exclude_session_ids=["a"],
        )
        assert found == [("c", "c-u8")]

    async def test_records_carry_the_whole_message(self, memory: FullMemoryService) -> None:
        self.require(memory, CROSS)
        saved = full_message(ts=0)
        await memory.save_message("s", saved)
        records = await memory.get_recent_messages_across_sessions(
            RecentMessagesQuery(limit=5, roles=["assistant"])
        )
        assert records == [RecentMessageRecord("s", saved)]

    async def test_filtering_happens_in_the_query(self, memory: FullMemoryService) -> None:
        # Many newer non-matching messages must not crowd out the older matching ones.
        self.require(memory, CROSS)
        for i in range(3):
            await memory.save_message(f"old{i}", msg(f"match{i}", ts=i, metadata={"platform": "p"}))
        for i in range(400):
            noise = msg(f"noise{i}", ts=100 + i, metadata={"platform": "q"})
            await memory.save_message(f"noise{i % 7}", noise)
            await memory.save_message(
                "tools", msg(f"tool{i}", role="tool", ts=100 + i, tool_call_id="c")
            )
        found = await self._query(memory, limit=3, platform="p")
        assert found == [("old0", "match0"), ("old1", "match1"), ("old2", "match2")]
        found = await self._query(memory, limit=2, roles=["tool"], since_ts=T0)
        assert found == [("tools", "tool398"), ("tools", "tool399")]

    async def test_limit_is_capped_by_cross_session_max_limit(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, CROSS)
        cap = cross_session_max_limit(memory)
        for i in range(cap + 5):
            await memory.save_message(f"s{i % 3}", msg(f"m{i}", ts=i))
        for limit in (INF, cap + 1, cap + 5):
            found = await self._query(memory, limit=limit)
            assert [content for _, content in found] == [f"m{i}" for i in range(5, cap + 5)]

    @pytest.mark.parametrize(
        ("query", "error"),
        [
            ("not a query", TypeError),
            ({"limit": 5}, TypeError),
            (RecentMessagesQuery(limit=-1), ValueError),
            (RecentMessagesQuery(limit=2.0), ValueError),
            (RecentMessagesQuery(limit=True), ValueError),
            (RecentMessagesQuery(limit=float("nan")), ValueError),
            (RecentMessagesQuery(limit="5"), TypeError),  # type: ignore[arg-type]
            (RecentMessagesQuery(roles=[1]), TypeError),  # type: ignore[list-item]
            (RecentMessagesQuery(since_ts="0"), TypeError),  # type: ignore[arg-type]
            (RecentMessagesQuery(platform=1), TypeError),  # type: ignore[arg-type]
            (RecentMessagesQuery(exclude_session_ids=[1]), TypeError),  # type: ignore[list-item]
        ],
        ids=[
            "str",
            "dict",
            "negative",
            "float",
            "bool",
            "nan",
            "str-limit",
            "roles-int",
            "since-str",
            "platform-int",
            "exclude-int",
        ],
    )
    async def test_bad_query_raises(
        self, memory: FullMemoryService, query: Any, error: type[Exception]
    ) -> None:
        self.require(memory, CROSS)
        with pytest.raises(error):
            await memory.get_recent_messages_across_sessions(query)


__all__ = ["CrossSessionConformance", "RangeQueryConformance"]
