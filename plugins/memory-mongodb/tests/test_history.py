"""SPEC §4 message semantics on the MongoDB store (nx-27017 or AALIS_TEST_MONGODB_URI)."""

from __future__ import annotations

import math

import pytest
from aalis_api_memory import RecentMessagesQuery, StoredMessage
from aalis_schema_message import Message, ToolCall

T0 = 1_700_000_000_000
INF = math.inf


def m(
    content: str,
    ts: int | None = None,
    *,
    role: str = "user",
    kind: str | None = None,
    **kw: object,
) -> Message:
    return Message(
        role=role, content=content, kind=kind, timestamp=None if ts is None else T0 + ts, **kw
    )


def marker(content: str, ts: int) -> Message:
    return m(content, ts, role="notice", kind="event-marker")


def texts(messages: list[Message]) -> list[str | None]:
    return [message.content for message in messages]


async def save_all(memory, session_id: str, messages: list[Message]) -> None:
    for message in messages:
        await memory.save_message(session_id, message)


async def test_round_trip_keeps_every_field(memory):
    message = Message(
        role="assistant",
        content="full",
        tool_calls=(ToolCall(id="c1", name="search", arguments='{"q": 1}'),),
        tool_call_id="tc",
        name="helper",
        kind="reply",
        timestamp=T0,
        reasoning_content="why",
        segments=({"type": "text", "text": "hi"},),
        images=("a.png", {"url": "b.jpg", "w": 10, "h": 2.5}),
        audios=({"url": "a.ogg", "tags": ["x", None, True]},),
        metadata={"platform": "qq", "nested": {"flag": False, "list": [1, 2.5, {"x": None}]}},
        id="every-field",
    )
    await memory.save_message("s", message)
    [back] = await memory.get_history("s")
    assert back == message
    assert back.metadata["nested"]["flag"] is False  # a bool, not 0
    assert back.audios[0]["tags"][2] is True


async def test_unstamped_message_gets_now(memory):
    await memory.save_message("s", Message(role="user", content="now"))
    [back] = await memory.get_history("s")
    assert isinstance(back.timestamp, int)
    assert back.timestamp > T0


async def test_ties_on_timestamp_keep_insertion_order(memory):
    await save_all(memory, "s", [m(str(i), 0) for i in range(20)])
    await memory.save_message("s", m("early", -1))
    assert texts(await memory.get_history("s", INF)) == ["early", *map(str, range(20))]


async def test_history_window_counts_only_conversation(memory):
    await save_all(
        memory,
        "s",
        [
            marker("m0", 0),
            m("a", 1),
            marker("m1", 2),
            m("b", 3),
            marker("m2", 4),
            m("c", 5),
            marker("m3", 6),
        ],
    )
    # everything after the (limit+1)-th newest conversation message, markers included
    assert texts(await memory.get_history("s", 1)) == ["m2", "c", "m3"]
    assert texts(await memory.get_history("s", 2)) == ["m1", "b", "m2", "c", "m3"]
    assert texts(await memory.get_history("s", 3)) == ["m0", "a", "m1", "b", "m2", "c", "m3"]
    assert texts(await memory.get_history("s", 10)) == texts(await memory.get_history("s", INF))
    assert await memory.get_history("s", 0) == []
    assert await memory.count_history("s") == 3


async def test_history_default_limit_is_50(memory):
    await save_all(memory, "s", [m(str(i), i) for i in range(60)])
    assert texts(await memory.get_history("s")) == [str(i) for i in range(10, 60)]
    assert len(await memory.get_full_history("s")) == 60


async def test_full_history_includes_archived_in_order(memory):
    await save_all(memory, "s", [m(str(i), i) for i in range(6)])
    assert await memory.archive_span("s", 3) == 3
    assert texts(await memory.get_history("s", INF)) == ["3", "4", "5"]
    assert texts(await memory.get_full_history("s", INF)) == [str(i) for i in range(6)]
    assert texts(await memory.get_full_history("s", 2)) == ["4", "5"]
    assert await memory.get_full_history("s", 0) == []


async def test_archive_span_positions_and_keep(memory):
    await save_all(memory, "s", [m("a", 0), marker("mk", 1), m("b", 2), m("c", 3), m("d", 4)])
    # positions 0..3 are a, mk, b, c; keep 1 (the marker) and 2 (b); 9 is outside the span
    assert await memory.archive_span("s", 4, keep=[1, 2, 2, 9]) == 2
    assert texts(await memory.get_history("s", INF)) == ["mk", "b", "d"]
    exported = await memory.export_session("s")
    assert [(s.message.content, s.archived) for s in exported] == [
        ("a", True),
        ("mk", False),
        ("b", False),
        ("c", True),
        ("d", False),
    ]
    assert await memory.archive_span("s", 0) == 0
    assert await memory.archive_span("s", INF) == 3
    assert await memory.get_history("s", INF) == []
    assert await memory.archive_span("s", 5) == 0


async def test_archive_span_refuses_bad_input_and_changes_nothing(memory):
    await save_all(memory, "s", [m("a", 0), m("b", 1)])
    for bad in (-1, 2.0, math.nan, True, 1.5):
        with pytest.raises(ValueError, match="non-negative int"):
            await memory.archive_span("s", bad)
    with pytest.raises(TypeError):
        await memory.archive_span("s", "1")
    with pytest.raises(TypeError):
        await memory.archive_span("s", 1, keep="0")
    with pytest.raises(ValueError, match="non-negative"):
        await memory.archive_span("s", 1, keep=[-1])
    assert texts(await memory.get_history("s", INF)) == ["a", "b"]


async def test_clear_session_and_clear_all(memory):
    await save_all(memory, "a", [m("1", 0), m("2", 1)])
    await save_all(memory, "b", [m("3", 0)])
    await memory.archive_span("a", 1)
    await memory.save_metadata("ns", "k", {"v": 1})
    await memory.clear_session("a")
    assert await memory.get_full_history("a", INF) == []
    assert texts(await memory.get_history("b")) == ["3"]
    await memory.clear_all()
    assert await memory.get_full_history("b", INF) == []
    assert await memory.list_sessions() == []
    assert await memory.get_metadata("ns", "k") == {"v": 1}


async def test_range_query(memory):
    await save_all(
        memory,
        "s",
        [
            m("a", 0),
            m("b", 1, role="assistant"),
            marker("mk", 2),
            m("c", 3, kind="note"),
            m("d", 4),
        ],
    )
    await memory.archive_span("s", 1)
    assert texts(await memory.get_messages_by_session_range("s", T0, T0 + 3)) == [
        "a",
        "b",
        "mk",
        "c",
    ]
    assert texts(
        await memory.get_messages_by_session_range("s", T0 + 1, T0 + 4, roles=["user"])
    ) == ["c", "d"]
    assert texts(await memory.get_messages_by_session_range("s", T0, T0 + 4, roles=[])) == [
        "a",
        "b",
        "mk",
        "c",
        "d",
    ]
    assert texts(
        await memory.get_messages_by_session_range(
            "s", T0, T0 + 4, exclude_kinds=["event-marker", "note"]
        )
    ) == ["a", "b", "d"]
    assert await memory.get_messages_by_session_range("s", T0 + 5, T0 + 4) == []


async def test_range_query_returns_earliest_up_to_the_cap(memory):
    memory.range_query_limit = 3
    await save_all(memory, "s", [m(str(i), i) for i in range(5)])
    assert texts(await memory.get_messages_by_session_range("s", T0, T0 + 10)) == ["0", "1", "2"]


async def test_recent_across_sessions_filters_in_the_query(memory):
    await memory.save_message("a", m("a-user", 0, metadata={"platform": "qq"}))
    await memory.save_message("b", m("b-assist", 1, role="assistant", metadata={"platform": "tg"}))
    await memory.save_message("a", m("a-tool", 2, role="tool"))
    await memory.save_message("c", m("c-note", 3, kind="note", metadata={"platform": "qq"}))
    await memory.save_message("c", marker("c-marker", 4))
    # many non-matching newer messages must not push matches out of the limit
    for i in range(30):
        await memory.save_message("noise", m(f"n{i}", 100 + i, role="system"))
    await memory.save_message("z", m("z-archived", 5))
    await memory.archive_span("z", INF)

    async def recent(**kw: object) -> list[tuple[str, str | None]]:
        return [
            (r.session_id, r.message.content)
            for r in await memory.get_recent_messages_across_sessions(RecentMessagesQuery(**kw))
        ]

    assert await recent(limit=10) == [("a", "a-user"), ("b", "b-assist"), ("c", "c-note")]
    assert await recent(limit=2) == [("b", "b-assist"), ("c", "c-note")]
    assert await recent(limit=10, roles=("tool",)) == [("a", "a-tool")]
    assert await recent(limit=10, roles=("notice",)) == [("c", "c-marker")]
    assert await recent(limit=10, kinds=("note",)) == [("c", "c-note")]
    assert await recent(limit=10, kinds=("note",), exclude_kinds=("note",)) == []
    assert await recent(limit=10, exclude_kinds=("note",)) == [("a", "a-user"), ("b", "b-assist")]
    assert await recent(limit=10, since_ts=T0 + 1) == [("b", "b-assist"), ("c", "c-note")]
    assert await recent(limit=10, platform="qq") == [("a", "a-user"), ("c", "c-note")]
    assert await recent(limit=10, exclude_session_ids=("a", "c")) == [("b", "b-assist")]
    assert await recent(limit=0) == []
    assert await recent(limit=INF) == [("a", "a-user"), ("b", "b-assist"), ("c", "c-note")]


async def test_recent_across_sessions_caps_the_limit(memory):
    memory.cross_session_max_limit = 2
    for i in range(4):
        await memory.save_message(f"s{i}", m(str(i), i))
    records = await memory.get_recent_messages_across_sessions(RecentMessagesQuery(limit=INF))
    assert [r.message.content for r in records] == ["2", "3"]


async def test_update_message_content_within_recent_limit(memory):
    await save_all(memory, "s", [m("tea and tea", 0), m("no", 1), m("tea", 2), m("Tea", 3)])
    await memory.archive_span("s", 1)
    assert await memory.update_message_content("s", "tea", "milk", 3) == 1
    assert texts(await memory.get_full_history("s", INF)) == ["tea and tea", "no", "milk", "Tea"]
    assert await memory.update_message_content("s", "tea", "milk") == 1
    full = await memory.get_full_history("s", INF)
    assert texts(full) == ["milk and milk", "no", "milk", "Tea"]
    assert [x.timestamp for x in full] == [T0, T0 + 1, T0 + 2, T0 + 3]
    assert await memory.update_message_content("s", "milk", "x", 0) == 0
    with pytest.raises(ValueError, match="must not be empty"):
        await memory.update_message_content("s", "", "x")


async def test_delete_messages_by_timestamps(memory):
    await save_all(memory, "s", [m("a", 0), m("b", 1), m("b2", 1), m("c", 2)])
    await save_all(memory, "other", [m("o", 1)])
    await memory.archive_span("s", 1)
    assert await memory.delete_messages_by_timestamps("s", [T0, T0 + 1, T0 + 99]) == 3
    assert texts(await memory.get_full_history("s", INF)) == ["c"]
    assert texts(await memory.get_full_history("other", INF)) == ["o"]
    assert await memory.delete_messages_by_timestamps("s", []) == 0
    with pytest.raises(TypeError):
        await memory.delete_messages_by_timestamps("s", [1.5])


async def test_list_sessions_newest_first(memory):
    await save_all(memory, "old", [m("a", 0), m("b", 1)])
    await save_all(memory, "new", [m("c", 5), marker("mk", 9)])
    await memory.archive_span("old", 1)
    sessions = await memory.list_sessions()
    assert [(s.session_id, s.active, s.archived, s.last_timestamp) for s in sessions] == [
        ("new", 2, 0, T0 + 9),
        ("old", 1, 1, T0 + 1),
    ]


async def test_export_import_round_trip(memory):
    await save_all(memory, "s", [m("a", 0), marker("mk", 1), m("b", 1)])
    await memory.archive_span("s", 1)
    exported = await memory.export_session("s")
    # A copy inside one store takes new ids: ids are unique in the whole store.
    copies = [
        StoredMessage(r.message.with_id(f"copy-{i}"), r.archived) for i, r in enumerate(exported)
    ]
    assert await memory.import_messages("copy", copies) == 3
    assert await memory.export_session("copy") == copies
    assert await memory.import_messages("copy", []) == 0
    # imported messages land after what is there, by timestamp then insertion order
    assert await memory.import_messages("copy", [StoredMessage(m("late", 1))]) == 1
    assert texts(await memory.get_full_history("copy", INF)) == ["a", "mk", "b", "late"]


async def test_import_refuses_bad_records_and_writes_nothing(memory):
    with pytest.raises(TypeError):
        await memory.import_messages("s", [StoredMessage(m("a", 0)), "not a record"])
    with pytest.raises(TypeError):
        await memory.import_messages("s", [StoredMessage(m("a", 0), archived=1)])
    assert await memory.export_session("s") == []


async def test_history_window_wider_than_the_first_read(memory):
    # 40 markers inside the window: more than the first bounded read covers.
    await save_all(memory, "s", [m(f"c{i}", i) for i in range(4)])
    await save_all(memory, "s", [marker(f"mk{i}", 10) for i in range(40)])
    await memory.save_message("s", m("c4", 20))
    expected = ["c3", *(f"mk{i}" for i in range(40)), "c4"]
    assert texts(await memory.get_history("s", 2)) == expected
    assert texts(await memory.get_history("s", 1)) == expected[1:]
    assert texts(await memory.get_history("s", 5)) == ["c0", "c1", "c2", *expected]
