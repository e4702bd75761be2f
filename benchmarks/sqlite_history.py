"""memory-sqlite against hand-written ``sqlite3``: get_history(50), count_history, save_message.

What is compared, all in one run and interleaved (``_harness.interleaved``):

* **hand-written**: a plain ``sqlite3`` connection running the same window query on the same
  file (``fetchall`` of the rows' JSON text, nothing decoded) — the floor any implementation
  of get_history pays; for count, the ``count(*)`` anyone would write; for writes, one
  ``INSERT`` + ``COMMIT`` into a one-index table, with the same durability (WAL, the same
  ``synchronous``).
* each **synchronously** and through **one ``asyncio.to_thread`` hop**, because an async
  backend cannot avoid a hop (blocking the event loop is not an option);
* **memory-sqlite**: ``await store.get_history(...)`` (the real API: validation, one hop to
  the store's worker thread, query, decoding into ``Message`` objects), and its engine called
  synchronously (the same work without the hop);
* for information, hand-written **plus decoding** into ``Message`` the obvious way
  (``Message.from_json(json.loads(row))`` per row), which is what equal output costs by hand.

Sessions of 10,000 and 100,000 messages (90 % archived, an event marker every 10th message)
are built in temporary files; ``--quick`` uses 1,000 and 10,000.

Run: ``.venv/bin/python benchmarks/sqlite_history.py`` → ``benchmarks/results/sqlite_history.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, interleaved, parse_args, print_table, ratio, run, scratch_dir, sync
from aalis_api_memory import StoredMessage
from aalis_plugin_memory_sqlite import SqliteMemory
from aalis_plugin_memory_sqlite._codec import message_columns
from aalis_plugin_memory_sqlite._engine import _HISTORY, Engine
from aalis_plugin_memory_sqlite._schema import connect
from aalis_schema_message import Message

NAME = "sqlite_history"
T0 = 1_700_000_000_000
LIMIT = 50
SYNCHRONOUS = "NORMAL"
HISTORY_TARGET = 1.5  # times the hand-written query through one thread hop
FLAT_TARGET = 1.25  # 100k / 10k
SAVE_TARGET = 2.0  # times hand-written insert+commit

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "tea",
    "brews",
    "and",
    "a",
    "kettle",
    "sings",
    "about",
    "weather",
    "trains",
    "meetings",
    "code",
    "reviews",
    "lunch",
    "plans",
    "and",
    "what",
    "to",
    "read",
    "next",
    "weekend",
]


def conversation(size: int) -> list[StoredMessage]:
    """``size`` messages of varied length; the oldest 90 % archived; a marker every 10th."""
    out = []
    for i in range(size):
        words = 8 + (i * 7919) % 40
        text = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(words))
        if i % 10 == 9:
            message = Message(
                role="notice", content=f"turn {i}", kind="event-marker", timestamp=T0 + i * 1000
            )
        else:
            message = Message(
                role="user" if i % 2 else "assistant",
                content=text,
                timestamp=T0 + i * 1000,
                metadata={"platform": "cli"},
            )
        out.append(StoredMessage(message, archived=i < size * 9 // 10))
    return out


def _noop(*_args: Any) -> None:
    return None


HAND_DDL = """
CREATE TABLE IF NOT EXISTS hand (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, timestamp INTEGER NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0, kind TEXT, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS hand_session ON hand (session_id, archived, timestamp);
"""
HAND_COUNT = (
    "SELECT count(*) FROM messages WHERE session_id = ? AND archived = 0"
    " AND (kind IS NULL OR kind != 'event-marker')"
)


def hand_connection(path: Path, *, threads: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=not threads)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
    return conn


async def build(path: Path, size: int) -> None:
    async with SqliteMemory(path, synchronous=SYNCHRONOUS) as store:
        await store.import_messages("s", conversation(size))
        # Another session, so the table is bigger than the session measured.
        await store.import_messages("other", conversation(size // 10))


async def measure_size(
    path: Path, size: int, rounds: int, calls: int
) -> dict[str, dict[str, float]]:
    """Every get_history/count_history contender on one file, interleaved."""
    await build(path, size)
    hand = hand_connection(path)
    hand_threaded = hand_connection(path, threads=True)
    engine = Engine(
        connect(path, synchronous=SYNCHRONOUS),
        range_query_limit=500,
        cross_session_max_limit=1000,
        warn=print,
    )
    try:
        async with SqliteMemory(path, synchronous=SYNCHRONOUS) as store:
            expected = await store.get_history("s", LIMIT)
            assert engine.get_history("s", LIMIT) == expected
            rows = hand.execute(_HISTORY, ("s", LIMIT)).fetchall()
            assert [Message.from_json(json.loads(r[0])) for r in rows] == expected
            assert hand.execute(HAND_COUNT, ("s",)).fetchone()[0] == await store.count_history("s")

            def hand_history() -> list[Any]:
                return hand.execute(_HISTORY, ("s", LIMIT)).fetchall()

            def hand_history_threaded() -> list[Any]:
                return hand_threaded.execute(_HISTORY, ("s", LIMIT)).fetchall()

            def hand_decoded() -> list[Message]:
                rows = hand.execute(_HISTORY, ("s", LIMIT))
                return [Message.from_json(json.loads(row[0])) for row in rows]

            def hand_count() -> int:
                return int(hand.execute(HAND_COUNT, ("s",)).fetchone()[0])

            def hand_count_threaded() -> int:
                return int(hand_threaded.execute(HAND_COUNT, ("s",)).fetchone()[0])

            contenders = {
                "get_history: hand-written, sync": sync(hand_history),
                "get_history: hand-written, 1 thread hop": lambda: asyncio.to_thread(
                    hand_history_threaded
                ),
                "get_history: memory-sqlite engine, sync": sync(
                    lambda: engine.get_history("s", LIMIT)
                ),
                "get_history: memory-sqlite, await": lambda: store.get_history("s", LIMIT),
                "get_history: engine query + from_stored(json.loads(row)) per row, sync": sync(
                    lambda: [
                        Message.from_stored(json.loads(text))
                        for text in engine.history_texts("s", LIMIT)
                    ]
                ),
                "get_history: hand-written + Message.from_json, sync": sync(hand_decoded),
                "count_history: hand-written count(*), sync": sync(hand_count),
                "count_history: hand-written count(*), 1 thread hop": lambda: asyncio.to_thread(
                    hand_count_threaded
                ),
                "count_history: memory-sqlite engine, sync": sync(
                    lambda: engine.count_history("s")
                ),
                "count_history: memory-sqlite, await": lambda: store.count_history("s"),
                "hop only: asyncio.to_thread(no-op)": lambda: asyncio.to_thread(_noop),
                "hop only: memory-sqlite worker (no-op)": lambda: store.run_on_connection(_noop),
            }
            return await interleaved(contenders, rounds=rounds, calls_per_round=calls)
    finally:
        engine.close()
        hand.close()
        hand_threaded.close()


async def history_section(report: Report, scratch: Path, sizes: list[int], quick: bool) -> None:
    rounds, calls = (5, 20) if quick else (25, 40)
    medians: dict[tuple[str, int], float] = {}
    for size in sizes:
        timings = await measure_size(scratch / f"history-{size}.db", size, rounds, calls)
        for name, figures in timings.items():
            medians[(name, size)] = figures["median_us"]
            report.row(section="history", size=size, contender=name, **figures)

    small, large = sizes
    table = []
    for name in dict.fromkeys(name for name, _ in medians):
        a, b = medians[(name, small)], medians[(name, large)]
        table.append([name, a, b, ratio(b, a)])
        report.ratio(f"{name} | {large} vs {small}", ratio(b, a))
    print_table(
        f"get_history({LIMIT}) and count_history, median µs per call",
        ["contender", f"{small:,}", f"{large:,}", "large/small"],
        table,
    )
    ours = medians[("get_history: memory-sqlite, await", large)]
    hop = medians[("get_history: hand-written, 1 thread hop", large)]
    plain = medians[("get_history: hand-written, sync", large)]
    decoded = medians[("get_history: hand-written + Message.from_json, sync", large)]
    report.ratio("get_history await / hand-written 1 hop", ratio(ours, hop))
    report.ratio(
        "get_history engine sync / hand-written sync",
        ratio(medians[("get_history: memory-sqlite engine, sync", large)], plain),
    )
    report.ratio("get_history await / hand-written sync", ratio(ours, plain))
    report.ratio("get_history await / hand-written + decode sync", ratio(ours, decoded))
    flat = ratio(ours, medians[("get_history: memory-sqlite, await", small)])
    count_ours = medians[("count_history: memory-sqlite, await", large)]
    count_hop = medians[("count_history: hand-written count(*), 1 thread hop", large)]
    report.ratio("count_history await / hand-written count(*) 1 hop", ratio(count_ours, count_hop))
    got = ratio(ours, hop)
    report.target(
        f"get_history({LIMIT}) at {large:,}: await vs hand-written + 1 hop",
        f"<= {HISTORY_TARGET}x",
        got,
        None if got is None else got <= HISTORY_TARGET,
    )
    report.target(
        f"get_history({LIMIT}) flat: {large:,} vs {small:,}",
        f"<= {FLAT_TARGET}x",
        flat,
        None if flat is None else flat <= FLAT_TARGET,
    )
    count_flat = ratio(count_ours, medians[("count_history: memory-sqlite, await", small)])
    report.target(
        f"count_history flat: {large:,} vs {small:,}",
        f"<= {FLAT_TARGET}x",
        count_flat,
        None if count_flat is None else count_flat <= FLAT_TARGET,
    )


async def save_section(report: Report, scratch: Path, quick: bool) -> None:
    rounds, calls = (5, 20) if quick else (20, 50)
    path = scratch / "save.db"
    await build(path, 1_000 if quick else 10_000)
    hand = hand_connection(path)
    hand.executescript(HAND_DDL)
    hand_threaded = hand_connection(path, threads=True)
    engine = Engine(
        connect(path, synchronous=SYNCHRONOUS),
        range_query_limit=500,
        cross_session_max_limit=1000,
        warn=print,
    )
    counter = iter(range(10**9))

    def message() -> Message:
        i = next(counter)
        return Message(role="user", content=f"hello {i} " + " ".join(WORDS[:20]), timestamp=T0 + i)

    def hand_insert(conn: sqlite3.Connection) -> None:
        m = message()
        conn.execute(
            "INSERT INTO hand (session_id, timestamp, archived, kind, data) VALUES (?, ?, 0, ?, ?)",
            ("hand", m.timestamp, m.kind, json.dumps(m.to_json())),
        )
        conn.commit()

    def engine_save() -> None:
        m = message()
        assert m.timestamp is not None
        engine.save_message("engine", message_columns(m, m.timestamp))

    async with SqliteMemory(path, synchronous=SYNCHRONOUS) as store:

        async def ours() -> None:
            await store.save_message("ours", message())

        contenders = {
            "save: hand-written insert+commit, sync": sync(lambda: hand_insert(hand)),
            "save: hand-written insert+commit, 1 thread hop": lambda: asyncio.to_thread(
                hand_insert, hand_threaded
            ),
            "save: memory-sqlite engine, sync": sync(engine_save),
            "save_message: memory-sqlite, await": ours,
        }
        timings = await interleaved(contenders, rounds=rounds, calls_per_round=calls)
        count = await store.count_history("ours")
        throughput = await concurrent_throughput(store, hand, message, hand_insert, quick)
    engine.close()
    hand.close()
    hand_threaded.close()
    assert count == rounds * calls + 3
    table = []
    for name, figures in timings.items():
        report.row(section="save", contender=name, **figures)
        table.append([name, figures["median_us"], 1e6 / figures["median_us"]])
    print_table(
        f"writes (WAL, synchronous={SYNCHRONOUS}), per call",
        ["contender", "median µs", "per second"],
        table,
    )
    ours_us = timings["save_message: memory-sqlite, await"]["median_us"]
    sync_us = timings["save: hand-written insert+commit, sync"]["median_us"]
    hop_us = timings["save: hand-written insert+commit, 1 thread hop"]["median_us"]
    engine_us = timings["save: memory-sqlite engine, sync"]["median_us"]
    report.ratio("save_message await / hand-written sync", ratio(ours_us, sync_us))
    report.ratio("save_message await / hand-written 1 hop", ratio(ours_us, hop_us))
    report.ratio(
        "save engine sync / hand-written sync (storage work alone)", ratio(engine_us, sync_us)
    )
    for label, base in (("sync", sync_us), ("1 thread hop", hop_us)):
        got = ratio(ours_us, base)
        report.target(
            f"save_message latency vs hand-written insert+commit, {label}",
            f"<= {SAVE_TARGET}x",
            got,
            None if got is None else got <= SAVE_TARGET,
        )
    hand_rate, ours_rate = throughput["hand-written sync loop"], throughput[f"{WRITERS} writers"]
    print_table(
        f"save throughput (messages/s, median of rounds; memory-sqlite with {WRITERS} tasks)",
        ["contender", "messages/s"],
        [
            ["hand-written insert+commit, sync loop", hand_rate],
            ["memory-sqlite save_message", ours_rate],
        ],
    )
    report.row(section="save throughput", contender="hand-written sync loop", per_second=hand_rate)
    report.row(
        section="save throughput", contender=f"memory-sqlite, {WRITERS} tasks", per_second=ours_rate
    )
    got = ratio(hand_rate, ours_rate)
    report.ratio("save throughput: hand-written / memory-sqlite", got)
    report.target(
        "save_message throughput vs hand-written insert+commit (slowdown)",
        f"<= {SAVE_TARGET}x",
        got,
        None if got is None else got <= SAVE_TARGET,
    )


WRITERS = 32


async def concurrent_throughput(
    store: SqliteMemory,
    hand: sqlite3.Connection,
    message: Any,
    hand_insert: Any,
    quick: bool,
) -> dict[str, float]:
    """Messages per second: a hand-written sync loop vs ``WRITERS`` tasks saving at once.

    Each acknowledged save is still its own transaction and commit; the tasks only keep the
    store's thread busy while the event loop prepares the next calls.
    """
    per_round = 200 if quick else 2_000
    rates: dict[str, list[float]] = {"hand-written sync loop": [], f"{WRITERS} writers": []}

    async def writer(n: int) -> None:
        for _ in range(n):
            await store.save_message("throughput", message())

    for _ in range(3 if quick else 5):
        start = time.perf_counter()
        for _ in range(per_round):
            hand_insert(hand)
        rates["hand-written sync loop"].append(per_round / (time.perf_counter() - start))
        start = time.perf_counter()
        await asyncio.gather(*(writer(per_round // WRITERS) for _ in range(WRITERS)))
        done = per_round // WRITERS * WRITERS
        rates[f"{WRITERS} writers"].append(done / (time.perf_counter() - start))
    return {name: round(statistics.median(values)) for name, values in rates.items()}


async def main(args: argparse.Namespace) -> None:
    sizes = [1_000, 10_000] if args.quick else [10_000, 100_000]
    report = Report(
        NAME,
        args,
        {
            "sizes": sizes,
            "archived_fraction": 0.9,
            "limit": LIMIT,
            "synchronous": SYNCHRONOUS,
            "journal_mode": "wal",
        },
    )
    with scratch_dir(NAME) as scratch:
        await history_section(report, scratch, sizes, args.quick)
        await save_section(report, scratch, args.quick)
    report.note(
        "hand-written rows are the window query's raw JSON text (nothing decoded); memory-sqlite "
        "returns Message objects. 'hand-written + Message.from_json' shows what equal output "
        "costs by hand."
    )
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0] if __doc__ else NAME))
