"""Query cost grows with what a call returns, not with the session or the table.

Cost is counted in SQLite virtual-machine steps (a progress handler called on every step),
which is deterministic, unlike a timing: the same call on a session 20 times larger must
take about the same number of steps. A missing index or a sort over a whole session shows
up as a step count that grows with the session.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import RecentMessagesQuery, StoredMessage
from aalis_plugin_memory_sqlite import SqliteMemory
from aalis_plugin_memory_sqlite._engine import Engine
from aalis_schema_message import Message

T0 = 1_700_000_000_000
SMALL, LARGE = 1_000, 20_000


def records(size: int, session: str) -> list[StoredMessage]:
    """``size`` messages, the oldest 90 % archived, a marker every 10th, platforms mixed."""
    out = []
    for i in range(size):
        kind = "event-marker" if i % 10 == 9 else None
        platform = "rare" if i % 97 == 0 else "common"
        message = Message(
            role="user" if i % 2 else "assistant",
            content=f"{session} message {i}",
            kind=kind,
            timestamp=T0 + i * 1000,
            metadata={"platform": platform},
        )
        out.append(StoredMessage(message, archived=i < size * 9 // 10))
    return out


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cost") / "cost.db"

    async def seed() -> None:
        async with SqliteMemory(path) as store:
            await store.import_messages("small", records(SMALL, "small"))
            await store.import_messages("large", records(LARGE, "large"))
            # Other sessions make the table larger than either session.
            for n in range(5):
                await store.import_messages(f"other{n}", records(4_000, f"other{n}"))

    import asyncio

    asyncio.run(seed())
    return path


async def steps(store: SqliteMemory, call: Callable[[Engine], Any]) -> int:
    engine = store.engine

    def run(conn: sqlite3.Connection) -> int:
        counter = [0]

        def tick() -> int:
            counter[0] += 1
            return 0

        conn.set_progress_handler(tick, 1)
        try:
            call(engine)
        finally:
            conn.set_progress_handler(None, 1)
        return counter[0]

    return await store.run_on_connection(run)


def span(size: int, fraction: float) -> int:
    return T0 + int(size * fraction) * 1000


READS: dict[str, Callable[[str, int], Callable[[Engine], Any]]] = {
    "get_history(50)": lambda sid, size: lambda e: e.get_history(sid, 50),
    "the get_history(50) query alone": lambda sid, size: lambda e: e.history_texts(sid, 50),
    "count_history": lambda sid, size: lambda e: e.count_history(sid),
    "get_full_history(50)": lambda sid, size: lambda e: e.get_full_history(sid, 50),
    "range of 40 messages in the archived part": lambda sid, size: (
        lambda e: e.get_messages_by_session_range(
            sid, span(size, 0.5), span(size, 0.5) + 39_000, None, None
        )
    ),
    "range with role and kind filters": lambda sid, size: (
        lambda e: e.get_messages_by_session_range(
            sid, span(size, 0.95), span(size, 0.95) + 39_000, ("user",), ("event-marker",)
        )
    ),
}


@pytest.mark.parametrize("name", list(READS))
async def test_session_reads_stay_flat(seeded: Path, name: str) -> None:
    async with SqliteMemory(seeded) as store:
        small = await steps(store, READS[name]("small", SMALL))
        large = await steps(store, READS[name]("large", LARGE))
    assert large <= small * 1.2 + 50, f"{name}: {small} steps at {SMALL}, {large} at {LARGE}"


async def test_cross_session_reads_grow_with_matches_not_table(tmp_path: Path) -> None:
    """30 messages of a rare platform among 1,000 or 20,000 others, active, interleaved in time."""

    def recent(engine: Engine) -> Any:
        return engine.get_recent_messages_across_sessions(
            20, ("user", "assistant"), None, None, None, "rare", None
        )

    async def cost(filler: int) -> int:
        async with SqliteMemory(tmp_path / f"x{filler}.db") as store:
            step = filler // 30
            for n in range(10):
                await store.import_messages(
                    f"busy{n}",
                    [
                        StoredMessage(
                            Message(
                                role="user",
                                content="busy",
                                timestamp=T0 + i * 10 + n,
                                metadata={"platform": "common"},
                            )
                        )
                        for i in range(filler // 10)
                    ],
                )
            await store.import_messages(
                "rare",
                [
                    StoredMessage(
                        Message(
                            role="user",
                            content=f"rare {i}",
                            timestamp=T0 + i * step * 10 + 5,
                            metadata={"platform": "rare"},
                        )
                    )
                    for i in range(30)
                ],
            )
            found = await store.get_recent_messages_across_sessions(
                RecentMessagesQuery(limit=20, platform="rare")
            )
            assert [r.message.content for r in found] == [f"rare {i}" for i in range(10, 30)]
            return await steps(store, recent)

    small, large = await cost(1_000), await cost(20_000)
    assert large <= small * 1.2 + 50, (small, large)


async def test_writes_touch_only_what_they_change(tmp_path: Path) -> None:
    async def costs(size: int) -> list[int]:
        path = tmp_path / f"w{size}.db"
        async with SqliteMemory(path) as store:
            await store.import_messages("s", records(size, "s"))
            ts = T0 + (size - 3) * 1000
            message = Message(role="user", content="new", timestamp=T0 + size * 1000)
            return [
                await steps(store, lambda e: e.archive_span("s", 10, frozenset({2}))),
                await steps(store, lambda e: e.delete_messages_by_timestamps("s", [ts])),
                await steps(store, lambda e: e.update_message_content("s", "message", "msg", 20)),
                await steps(store, lambda e: e.save_message("s", _row(message))),
            ]

    small, large = await costs(SMALL), await costs(LARGE)
    for label, a, b in zip(["archive_span", "delete", "update", "save"], small, large, strict=True):
        assert b <= a * 1.2 + 50, f"{label}: {a} steps at {SMALL}, {b} at {LARGE}"


def _row(message: Message) -> Any:
    from aalis_plugin_memory_sqlite._codec import message_columns
    from aalis_schema_message import new_message_id

    assert message.timestamp is not None
    # Named as the contract names every saved message: the unique id index is part of the cost.
    return message_columns(message.with_id(new_message_id()), message.timestamp)


async def test_get_history_answers_the_window_rule_on_the_large_session(seeded: Path) -> None:
    async with SqliteMemory(seeded) as store:
        got = await store.get_history("large", 5)
        assert await store.count_history("large") == LARGE // 10 - LARGE // 100
        everything = await store.get_history("large", math.inf)
    assert len(everything) == LARGE // 10
    assert got == everything[-6:]  # five conversation messages and the marker among them
