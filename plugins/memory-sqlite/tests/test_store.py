"""Behaviour of SqliteMemory that depends on how it stores rows (the kit covers the contract)."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import structlog
from aalis_api_memory import Delete, Put, RecentMessagesQuery, StoredMessage
from aalis_plugin_memory_sqlite import SqliteMemory, StoreClosed
from aalis_schema_message import Message, ToolCall

INF = math.inf
T0 = 1_700_000_000_000


def m(content: str, ts: int, role: str = "user", **fields: object) -> Message:
    return Message(role=role, content=content, timestamp=T0 + ts, **fields)  # type: ignore[arg-type]


def marker(content: str, ts: int) -> Message:
    return Message(role="notice", content=content, kind="event-marker", timestamp=T0 + ts)


def contents(messages: list[Message]) -> list[str | None]:
    return [message.content for message in messages]


async def test_equal_timestamps_keep_insertion_order(store: SqliteMemory) -> None:
    for name in "abcde":
        await store.save_message("s", m(name, 5))
    await store.save_message("s", m("early", 1))
    assert contents(await store.get_history("s", INF)) == ["early", "a", "b", "c", "d", "e"]
    assert contents(await store.get_history("s", 2)) == ["d", "e"]
    assert contents(await store.get_full_history("s", 3)) == ["c", "d", "e"]


async def test_history_boundary_skips_markers_and_archived_rows(store: SqliteMemory) -> None:
    for i in range(6):
        await store.save_message("s", m(f"c{i}", i * 10))
        await store.save_message("s", marker(f"k{i}", i * 10 + 1))
    # Archive the first four active rows, keeping position 1 (marker k0).
    assert await store.archive_span("s", 4, keep=[1]) == 3
    assert contents(await store.get_history("s", 2)) == ["k3", "c4", "k4", "c5", "k5"]
    assert contents(await store.get_history("s", INF))[:3] == ["k0", "c2", "k2"]
    assert await store.count_history("s") == 4


async def test_full_history_merges_active_and_archived_in_order(store: SqliteMemory) -> None:
    for i in range(10):
        await store.save_message("s", m(f"c{i}", i))
    # Archive positions 0..7 except 2 and 5: archived and active rows interleave in time.
    assert await store.archive_span("s", 8, keep=[2, 5]) == 6
    assert contents(await store.get_full_history("s", 4)) == ["c6", "c7", "c8", "c9"]
    assert contents(await store.get_full_history("s", 7)) == [f"c{i}" for i in range(3, 10)]
    exported = await store.export_session("s")
    assert [(r.message.content, r.archived) for r in exported] == [
        (f"c{i}", i < 8 and i not in (2, 5)) for i in range(10)
    ]


async def test_range_merges_both_partitions_and_applies_the_cap(db_path: Path) -> None:
    async with SqliteMemory(db_path, range_query_limit=5) as store:
        for i in range(12):
            role = "assistant" if i % 3 == 0 else "user"
            await store.save_message("s", m(f"c{i}", i, role=role))
        await store.save_message("s", marker("k", 4))
        await store.archive_span("s", 6, keep=[1])
        got = await store.get_messages_by_session_range("s", T0 + 1, T0 + 11)
        assert contents(got) == ["c1", "c2", "c3", "c4", "k"]
        users = await store.get_messages_by_session_range(
            "s", T0, T0 + 11, roles=["user", "notice"], exclude_kinds=["event-marker"]
        )
        assert contents(users) == ["c1", "c2", "c4", "c5", "c7"]


async def test_cross_session_filters_run_in_sql(store: SqliteMemory) -> None:
    for i in range(30):
        platform = "qq" if i % 10 == 0 else "cli"
        await store.save_message(
            f"s{i % 3}",
            m(f"c{i}", i, metadata={"platform": platform}, kind="reply" if i % 2 else None),
        )
    # The only qq messages are c0, c10, c20; the limit is reached only by filtering in SQL.
    got = await store.get_recent_messages_across_sessions(
        RecentMessagesQuery(limit=2, platform="qq")
    )
    assert [(r.session_id, r.message.content) for r in got] == [("s1", "c10"), ("s2", "c20")]
    got = await store.get_recent_messages_across_sessions(
        RecentMessagesQuery(limit=3, kinds=["reply"], exclude_session_ids=["s2"], since_ts=T0 + 20)
    )
    assert [r.message.content for r in got] == ["c21", "c25", "c27"]


async def test_platform_must_be_a_string_to_match(store: SqliteMemory) -> None:
    await store.save_message("s", m("number", 1, metadata={"platform": 7}))
    await store.save_message("s", m("text", 2, metadata={"platform": "7"}))
    got = await store.get_recent_messages_across_sessions(RecentMessagesQuery(platform="7"))
    assert [r.message.content for r in got] == ["text"]


async def test_counters_follow_every_write(
    store: SqliteMemory, stats_match_rows: Callable[[], None]
) -> None:
    for i in range(8):
        await store.save_message("a", m(f"a{i}", i))
        await store.save_message("b", marker(f"b{i}", i))
    await store.save_message("b", m("b-conv", 3))
    stats_match_rows()
    await store.archive_span("a", 5, keep=[0])
    stats_match_rows()
    assert await store.delete_messages_by_timestamps("a", [T0 + 1, T0 + 7, T0 + 99]) == 2
    stats_match_rows()
    await store.import_messages(
        "c", [StoredMessage(m("x", 50), archived=True), StoredMessage(m("y", 40))]
    )
    stats_match_rows()
    await store.delete_messages_by_timestamps("c", [T0 + 40, T0 + 50])
    stats_match_rows()
    sessions = {info.session_id: info for info in await store.list_sessions()}
    assert set(sessions) == {"a", "b"}
    assert (sessions["a"].active, sessions["a"].archived) == (3, 3)
    assert await store.count_history("b") == 1
    await store.clear_session("a")
    stats_match_rows()
    await store.clear_all()
    stats_match_rows()
    assert await store.list_sessions() == []


async def test_list_sessions_newest_first_by_any_row(store: SqliteMemory) -> None:
    await store.save_message("old", m("x", 1))
    await store.save_message("new", m("x", 2))
    await store.save_message("old", marker("late marker", 9))
    await store.archive_span("old", INF)
    assert [info.session_id for info in await store.list_sessions()] == ["old", "new"]
    assert (await store.list_sessions())[0].last_timestamp == T0 + 9


async def test_hostile_strings_are_only_ever_values(store: SqliteMemory) -> None:
    hostile = ["'; DROP TABLE messages; --", 'a"b', "nul\x00inside", "%", "_", "", "\u202e日本"]
    for i, sid in enumerate(hostile):
        await store.save_message(sid, m(sid, i, metadata={"platform": sid}))
        await store.save_metadata(sid, sid, {sid: sid})
    for sid in hostile:
        assert contents(await store.get_history(sid)) == [sid]
        assert await store.get_metadata(sid, sid) == {sid: sid}
        got = await store.get_recent_messages_across_sessions(RecentMessagesQuery(platform=sid))
        assert [(r.session_id, r.message.content) for r in got] == [(sid, sid)]
    assert sorted(await store.list_namespaces()) == sorted(hostile)


async def test_full_message_round_trips_through_the_fast_reader(store: SqliteMemory) -> None:
    message = Message(
        role="assistant",
        content=None,
        tool_calls=(ToolCall(id="1", name="f", arguments='{"a": 1}'),),
        tool_call_id="t",
        name="n",
        kind="reply",
        timestamp=T0,
        reasoning_content="why",
        segments=({"type": "text", "text": "hi"},),
        images=("a.png", {"url": "b"}),
        audios=({"seconds": 1.5},),
        metadata={"platform": "qq", "deep": {"x": [1, None, True, 2.5]}},
        id="m-1",
    )
    await store.save_message("s", message)
    (got,) = await store.get_history("s")
    assert got == message
    got.metadata["deep"]["x"].append("mutated")  # type: ignore[index]
    assert await store.get_history("s") == [message]


async def test_unstamped_message_gets_the_stored_time(store: SqliteMemory) -> None:
    await store.save_message("s", Message(role="user", content="now"))
    (got,) = await store.get_history("s")
    assert isinstance(got.timestamp, int)
    assert got.timestamp > T0


async def test_timestamp_outside_sqlite_integers_is_refused(store: SqliteMemory) -> None:
    with pytest.raises(ValueError, match="64-bit"):
        await store.save_message("s", Message(role="user", content="x", timestamp=2**63))
    assert await store.get_full_history("s", INF) == []
    # Out-of-range query bounds are not an error: they simply match what exists.
    await store.save_message("s", m("x", 0))
    assert contents(await store.get_messages_by_session_range("s", -(2**70), 2**70)) == ["x"]
    assert await store.delete_messages_by_timestamps("s", [2**70]) == 0


async def test_a_corrupt_message_row_is_skipped_with_a_warning(
    store: SqliteMemory, raw: Callable[[], sqlite3.Connection]
) -> None:
    for i in range(3):
        await store.save_message("s", m(f"c{i}", i))
    # By content, not LIKE on the JSON: the stored id (any case-folded "C1") could match too.
    raw().execute("UPDATE messages SET data = '{broken' WHERE data ->> '$.content' = 'c1'")
    with structlog.testing.capture_logs() as logs:
        assert contents(await store.get_history("s")) == ["c0", "c2"]
        assert [(r.message.content, r.archived) for r in await store.export_session("s")] == [
            ("c0", False),
            ("c2", False),
        ]
    assert any(entry["event"] == "skipped an unreadable message row" for entry in logs)


async def test_unreadable_metadata(
    store: SqliteMemory, raw: Callable[[], sqlite3.Connection]
) -> None:
    await store.save_metadata("ns", "good", {"a": 1})
    conn = raw()
    conn.execute("INSERT INTO metadata VALUES ('ns', 'corrupt', '{nope', 1)")
    conn.execute("INSERT INTO metadata VALUES ('ns', 'list', '[1, 2]', 1)")
    with structlog.testing.capture_logs() as logs:
        assert await store.get_metadata("ns", "corrupt") is None
        assert await store.get_metadata("ns", "list") is None
    assert [entry["key"] for entry in logs if entry["log_level"] == "warning"] == [
        "corrupt",
        "list",
    ]
    assert [entry.key for entry in await store.list_metadata("ns")] == ["good"]
    assert await store.list_metadata_keys("ns") == ["corrupt", "good", "list"]


async def test_commit_metadata_is_one_transaction(
    store: SqliteMemory, raw: Callable[[], sqlite3.Connection]
) -> None:
    await store.save_metadata("ns", "keep", {"v": 1})
    # A failure inside the transaction (after validation) must roll back every op of the batch.
    raw().execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON metadata WHEN NEW.key = 'boom'"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        await store.commit_metadata(
            [Put("ns", "a", {"x": 1}), Delete("ns", "keep"), Put("ns", "boom", {})]
        )
    assert await store.list_metadata_keys("ns") == ["keep"]
    batch = [Put("ns", f"k{i:03}", {"i": i}) for i in range(500)]
    await store.commit_metadata(batch)
    assert len(await store.list_metadata("ns")) == 501


async def test_archive_span_is_all_or_nothing(
    store: SqliteMemory, raw: Callable[[], sqlite3.Connection], stats_match_rows: Callable[[], None]
) -> None:
    for i in range(6):
        await store.save_message("s", m(f"c{i}", i))
    raw().execute(
        "CREATE TRIGGER refuse BEFORE UPDATE OF archived ON messages"
        " WHEN NEW.data ->> '$.content' = 'c3' BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(sqlite3.IntegrityError):
        await store.archive_span("s", 5)
    assert len(await store.get_history("s", INF)) == 6
    stats_match_rows()


async def test_import_is_all_or_nothing(
    store: SqliteMemory, stats_match_rows: Callable[[], None]
) -> None:
    good = StoredMessage(m("ok", 1))
    with pytest.raises(ValueError, match="64-bit"):
        await store.import_messages("s", [good, StoredMessage(Message(role="u", timestamp=2**64))])
    with pytest.raises(TypeError):
        await store.import_messages("s", [good, "not a record"])  # type: ignore[list-item]
    assert await store.export_session("s") == []
    assert await store.import_messages("s", []) == 0
    stats_match_rows()


async def test_data_survives_reopening(db_path: Path) -> None:
    async with SqliteMemory(db_path) as store:
        await store.save_message("s", m("kept", 1))
        await store.save_metadata("ns", "k", {"v": 1})
    async with SqliteMemory(db_path) as store:
        assert contents(await store.get_history("s")) == ["kept"]
        assert await store.get_metadata("ns", "k") == {"v": 1}


async def test_closed_store_says_so(db_path: Path) -> None:
    store = SqliteMemory(db_path)
    with pytest.raises(StoreClosed, match="not open"):
        await store.get_history("s")
    await store.open()
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreClosed):
        await store.save_message("s", m("x", 1))


async def test_calls_in_flight_finish_before_close(db_path: Path) -> None:
    import asyncio

    store = SqliteMemory(db_path)
    await store.open()
    saves = [asyncio.ensure_future(store.save_message("s", m(f"c{i}", i))) for i in range(50)]
    await asyncio.sleep(0)
    await store.close()
    await asyncio.gather(*saves)
    async with SqliteMemory(db_path) as reopened:
        assert await reopened.count_history("s") == 50


def test_constructor_validates_settings(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        SqliteMemory(tmp_path / "x.db", synchronous="OFF")
    with pytest.raises(TypeError, match="busy_timeout_ms"):
        SqliteMemory(tmp_path / "x.db", busy_timeout_ms="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="range_query_limit"):
        SqliteMemory(tmp_path / "x.db", range_query_limit=0)
    with pytest.raises(TypeError, match="path"):
        SqliteMemory(3)  # type: ignore[arg-type]


async def test_long_filter_lists_are_exact(store: SqliteMemory) -> None:
    """Past the inline limit a filter goes through a temporary table; NUL must survive it."""
    sessions = [f"s{i}" for i in range(5)] + ["nul\x00id"]
    for i, sid in enumerate(sessions):
        await store.save_message(sid, m(sid, i, kind=f"k{i}"))
    many = tuple(f"x{i}" for i in range(1_000))
    # More values than SQLite binds in one statement (32,766):
    very_many = tuple(f"x{i}" for i in range(33_000))
    got = await store.get_recent_messages_across_sessions(
        RecentMessagesQuery(
            exclude_session_ids=(*very_many, "s1", "nul\x00id"),
            kinds=(*many, "k0", "k1", "k2", "k5"),
            exclude_kinds=(*many, "k2"),
        )
    )
    assert [r.session_id for r in got] == ["s0"]
    ranged = await store.get_messages_by_session_range(
        "nul\x00id", T0, T0 + 10, roles=(*many, "user"), exclude_kinds=(*many, "k0")
    )
    assert contents(ranged) == ["nul\x00id"]
    # The same query again (the temporary tables are refilled, not appended to).
    again = await store.get_recent_messages_across_sessions(
        RecentMessagesQuery(exclude_session_ids=(*many, "s0"), kinds=(*many, "k3"))
    )
    assert [r.session_id for r in again] == ["s3"]


async def test_limits_beyond_sqlite_integers_mean_everything(store: SqliteMemory) -> None:
    for i in range(3):
        await store.save_message("s", m(f"c{i}", i))
    assert len(await store.get_history("s", 2**64)) == 3
    assert len(await store.get_full_history("s", 2**70)) == 3
    assert await store.update_message_content("s", "c", "d", 2**80) == 3
    assert await store.archive_span("s", 2**63, keep=[1]) == 2
    assert contents(await store.get_history("s", 2**63)) == ["d1"]


async def test_concurrent_opens_start_one_writer_and_one_reader(db_path: Path) -> None:
    import asyncio
    import threading

    store = SqliteMemory(db_path)
    before = {t.name for t in threading.enumerate()}
    await asyncio.gather(*(store.open() for _ in range(5)))
    started = [t for t in threading.enumerate() if t.name not in before]
    assert sorted(t.name for t in started) == [
        f"aalis-sqlite {db_path.name}",
        f"aalis-sqlite-read {db_path.name}",
    ]
    await store.close()
    assert not any(t.is_alive() for t in started)


async def test_a_dropped_store_does_not_leave_its_thread(db_path: Path) -> None:
    import gc
    import threading

    store = SqliteMemory(db_path)
    await store.open()
    await store.save_message("s", m("x", 1))
    names = {f"aalis-sqlite {db_path.name}", f"aalis-sqlite-read {db_path.name}"}
    threads = [t for t in threading.enumerate() if t.name in names]
    assert len(threads) == 2
    del store
    gc.collect()
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive()


async def test_concurrent_saves_commit_in_groups_and_keep_order(
    store: SqliteMemory, stats_match_rows: Callable[[], None]
) -> None:
    import asyncio

    async def writer(n: int) -> None:
        for i in range(40):
            # Same timestamp everywhere: only the insertion sequence orders them.
            await store.save_message(f"s{n % 5}", m(f"w{n}-{i}", 0))

    await asyncio.gather(*(writer(n) for n in range(25)))
    for session in range(5):
        got = contents(await store.get_history(f"s{session}", INF))
        assert len(got) == 200
        for n in range(session, 25, 5):
            assert [c for c in got if c and c.startswith(f"w{n}-")] == [
                f"w{n}-{i}" for i in range(40)
            ]
    stats_match_rows()


async def test_one_failing_save_in_a_group_fails_alone(
    store: SqliteMemory, raw: Callable[[], sqlite3.Connection], stats_match_rows: Callable[[], None]
) -> None:
    import asyncio

    raw().execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.data LIKE '%boom%'"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    import threading

    names = [f"c{i}" for i in range(30)]
    names[17] = "boom"
    gate = threading.Event()
    # Hold the store's thread so all 30 saves queue up and run as one group commit.
    blocker = asyncio.ensure_future(store.run_on_connection(lambda _conn: gate.wait()))
    saves = [asyncio.ensure_future(store.save_message("s", m(n, i))) for i, n in enumerate(names)]
    await asyncio.sleep(0.05)
    gate.set()
    await blocker
    results = await asyncio.gather(*saves, return_exceptions=True)
    failed = [i for i, result in enumerate(results) if isinstance(result, BaseException)]
    assert failed == [17]
    assert contents(await store.get_history("s", INF)) == [n for n in names if n != "boom"]
    stats_match_rows()
