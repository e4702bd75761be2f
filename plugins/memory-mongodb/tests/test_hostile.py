"""Hostile values: operators as ids, NUL, awkward strings, wrong types — values stay values."""

from __future__ import annotations

import math

import pytest
from aalis_api_memory import Delete, Put, RecentMessagesQuery
from aalis_schema_message import Message

T0 = 1_700_000_000_000
INF = math.inf

HOSTILE_STRINGS = [
    "$gt",
    "$where",
    "$ne",
    "$$ROOT",
    "$",
    "a.b",
    '{"$ne": 1}',
    "' OR 1=1 --",
    "\x00",
    "a\x00b",
    "",
    "\ufdd0",
    "\ufdd0a\x00",
    "1",
    "true",
    "null",
    "%24gt",
    "会话😀",
    "x" * 2000,
]


def m(content: str, ts: int, **kw: object) -> Message:
    return Message(role="user", content=content, timestamp=T0 + ts, **kw)


@pytest.mark.parametrize("value", [{"$ne": 1}, {"$gt": ""}, ["$gt"], 1, None, b"s", 1.5])
async def test_operator_and_non_str_session_ids_are_type_errors(memory, value):
    await memory.save_message("victim", m("keep", 0))
    calls = [
        memory.save_message(value, m("x", 1)),
        memory.get_history(value),
        memory.count_history(value),
        memory.get_full_history(value),
        memory.archive_span(value, INF),
        memory.clear_session(value),
        memory.get_messages_by_session_range(value, 0, T0 * 2),
        memory.update_message_content(value, "keep", "gone"),
        memory.delete_messages_by_timestamps(value, [T0]),
        memory.export_session(value),
        memory.import_messages(value, []),
    ]
    for call in calls:
        with pytest.raises(TypeError):
            await call
    assert [x.content for x in await memory.get_full_history("victim", INF)] == ["keep"]


@pytest.mark.parametrize("value", [{"$ne": 1}, {"$exists": True}, 1, None, ["k"]])
async def test_operator_namespaces_and_keys_are_type_errors(memory, value):
    await memory.save_metadata("ns", "k", {"v": 1})
    calls = [
        memory.save_metadata(value, "k", {}),
        memory.save_metadata("ns", value, {}),
        memory.get_metadata(value, "k"),
        memory.get_metadata("ns", value),
        memory.delete_metadata(value, "k"),
        memory.delete_metadata("ns", value),
        memory.list_metadata(value),
        memory.list_metadata_keys(value),
        memory.commit_metadata([Delete(value, "k")]),
        memory.commit_metadata([Delete("ns", value)]),
        memory.commit_metadata([Put("ns", "new", {}), Put(value, "k", {})]),
    ]
    for call in calls:
        with pytest.raises(TypeError):
            await call
    assert await memory.get_metadata("ns", "k") == {"v": 1}
    assert await memory.list_metadata_keys("ns") == ["k"]


@pytest.mark.parametrize("query_field", ["roles", "kinds", "exclude_kinds", "exclude_session_ids"])
async def test_operator_filters_in_queries_are_type_errors(memory, query_field):
    with pytest.raises(TypeError):
        await memory.get_recent_messages_across_sessions(
            RecentMessagesQuery(**{query_field: ({"$ne": 1},)})
        )
    with pytest.raises(TypeError):
        await memory.get_recent_messages_across_sessions(RecentMessagesQuery(platform={"$ne": 1}))
    with pytest.raises(TypeError):
        await memory.get_messages_by_session_range("s", 0, 1, roles=[{"$ne": 1}])


async def test_hostile_session_ids_are_stored_verbatim_and_isolated(memory):
    for index, sid in enumerate(HOSTILE_STRINGS):
        await memory.save_message(sid, m(f"msg-{index}", index))
    for index, sid in enumerate(HOSTILE_STRINGS):
        assert [x.content for x in await memory.get_history(sid)] == [f"msg-{index}"], repr(sid)
        assert await memory.count_history(sid) == 1
        assert [x.content for x in await memory.get_messages_by_session_range(sid, 0, T0 * 2)] == [
            f"msg-{index}"
        ]
    sessions = await memory.list_sessions()
    assert sorted(s.session_id for s in sessions) == sorted(HOSTILE_STRINGS)
    records = await memory.get_recent_messages_across_sessions(
        RecentMessagesQuery(limit=INF, exclude_session_ids=tuple(HOSTILE_STRINGS[1:]))
    )
    assert [(r.session_id, r.message.content) for r in records] == [(HOSTILE_STRINGS[0], "msg-0")]
    # clearing one hostile id touches only that session
    await memory.clear_session("$gt")
    await memory.clear_session("\x00")
    assert await memory.get_history("$gt") == []
    assert await memory.get_history("\x00") == []
    for survivor in ("a\x00b", "", "\ufdd0", "$ne"):
        expected = "msg-" + str(HOSTILE_STRINGS.index(survivor))
        assert [x.content for x in await memory.get_history(survivor)] == [expected]
    assert len(await memory.list_sessions()) == len(HOSTILE_STRINGS) - 2


async def test_hostile_namespaces_and_keys_are_stored_verbatim(memory):
    for index, name in enumerate(HOSTILE_STRINGS):
        await memory.save_metadata(name, name, {"i": index})
    assert await memory.list_namespaces() == sorted(HOSTILE_STRINGS)
    for index, name in enumerate(HOSTILE_STRINGS):
        assert await memory.get_metadata(name, name) == {"i": index}, repr(name)
        assert await memory.list_metadata_keys(name) == [name]
        assert [(e.key, e.data) for e in await memory.list_metadata(name)] == [(name, {"i": index})]
    await memory.commit_metadata([Delete(name, name) for name in HOSTILE_STRINGS[:5]])
    assert await memory.list_namespaces() == sorted(HOSTILE_STRINGS[5:])


async def test_hostile_roles_kinds_and_platforms_filter_as_values(memory):
    await memory.save_message(
        "s",
        Message(role="$gt", content="r", kind="$ne", timestamp=T0, metadata={"platform": "$gt"}),
    )
    await memory.save_message(
        "s",
        Message(
            role="user", content="u", kind="a\x00", timestamp=T0 + 1, metadata={"platform": "\x00"}
        ),
    )

    async def recent(**kw: object) -> list[str | None]:
        return [
            r.message.content
            for r in await memory.get_recent_messages_across_sessions(
                RecentMessagesQuery(limit=10, **kw)
            )
        ]

    assert await recent(roles=("$gt",)) == ["r"]
    assert await recent(roles=("$gt", "user"), kinds=("$ne",)) == ["r"]
    assert await recent(roles=("$gt", "user"), exclude_kinds=("a\x00",)) == ["r"]
    assert await recent(roles=("$gt", "user"), platform="$gt") == ["r"]
    assert await recent(roles=("$gt", "user"), platform="\x00") == ["u"]
    assert await recent(roles=("$gt", "user"), platform="") == []
    in_range = await memory.get_messages_by_session_range(
        "s", T0, T0 + 1, roles=["$gt"], exclude_kinds=["$ne"]
    )
    assert in_range == []
    [back_r, back_u] = await memory.get_history("s")
    assert (back_r.role, back_r.kind, back_u.kind, back_u.metadata) == (
        "$gt",
        "$ne",
        "a\x00",
        {"platform": "\x00"},
    )


async def test_message_bodies_with_operator_keys_round_trip(memory):
    message = Message(
        role="user",
        content="$where: 1",
        timestamp=T0,
        metadata={"$set": {"a.b": 1}, "$": [{"$gt": None}], "%24": "x", "big": 2**64, "k\x00": 1},
        segments=({"$type": "text", "a.b.c": ["$x"]},),
        id="$where",
    )
    await memory.save_message("s", message)
    assert await memory.get_history("s") == [message]
    assert await memory.update_message_content("s", "$where", "$ne") == 1
    [back] = await memory.get_history("s")
    assert back.content == "$ne: 1"
    assert back.metadata == message.metadata


@pytest.mark.parametrize("limit", [-1, 2.0, 0.5, math.nan, True, False, -math.inf])
async def test_bad_limits_are_value_errors(memory, limit):
    await memory.save_message("s", m("a", 0))
    for call in (
        memory.get_history("s", limit),
        memory.get_full_history("s", limit),
        memory.update_message_content("s", "a", "b", limit),
        memory.get_recent_messages_across_sessions(RecentMessagesQuery(limit=limit)),
    ):
        with pytest.raises(ValueError, match="non-negative int"):
            await call
    assert [x.content for x in await memory.get_history("s")] == ["a"]


async def test_lone_surrogates_are_refused_before_writing(memory):
    with pytest.raises(ValueError, match="surrogate"):
        await memory.save_message("s", m("bad \ud800", 0))
    with pytest.raises(ValueError, match="surrogate"):
        await memory.save_metadata("ns", "k", {"v": "\udfff"})
    with pytest.raises(ValueError, match="surrogate"):
        await memory.commit_metadata([Put("ns", "a", {}), Put("ns", "b", {"\ud800": 1})])
    assert await memory.get_full_history("s", INF) == []
    assert await memory.list_metadata_keys("ns") == []


async def test_oversized_message_is_refused_clearly(memory):
    with pytest.raises(ValueError, match="16777216"):
        await memory.save_message("s", m("x" * (17 * 1024 * 1024), 0))
    assert await memory.get_full_history("s", INF) == []
    await memory.save_message("s", m("y" * (2 * 1024 * 1024), 1))
    [back] = await memory.get_history("s")
    assert len(back.content or "") == 2 * 1024 * 1024


async def test_timestamp_outside_int64_is_refused(memory):
    with pytest.raises(ValueError, match="64 bits"):
        await memory.save_message("s", m("x", 2**64))
    assert await memory.get_full_history("s", INF) == []
    # and a lookup with such a timestamp finds nothing, without an error
    assert await memory.delete_messages_by_timestamps("s", [2**64]) == 0
    assert await memory.get_messages_by_session_range("s", -(2**70), 2**70) == []


async def test_huge_limits_mean_everything(memory):
    await memory.save_message("s", m("a", 0))
    await memory.save_message("s", m("b", 1))
    for limit in (2**63, 2**64, 10**30):
        assert [x.content for x in await memory.get_history("s", limit)] == ["a", "b"]
        assert [x.content for x in await memory.get_full_history("s", limit)] == ["a", "b"]
        assert await memory.update_message_content("s", "zzz", "y", limit) == 0
        records = await memory.get_recent_messages_across_sessions(RecentMessagesQuery(limit=limit))
        assert [r.message.content for r in records] == ["a", "b"]
    assert await memory.archive_span("s", 2**64, keep=[2**64]) == 2
    assert await memory.get_history("s") == []
