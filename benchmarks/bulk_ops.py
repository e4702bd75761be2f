"""Bulk operations: archive_span of 10k messages, commit_metadata of 500 ops, cross-session query.

SQLite (each beside the same operation hand-written with ``sqlite3`` on the same file, measured
interleaved in one run):

* ``archive_span(sid, 10_000)`` on a session of 20,000 active messages, vs one ``UPDATE ... WHERE
  seq IN (SELECT ... LIMIT 10000)`` + ``COMMIT``;
* ``commit_metadata`` of 500 ``Put`` ops in one transaction, vs ``executemany`` of the upsert in
  one transaction;
* ``get_recent_messages_across_sessions`` with a platform filter (``limit=50``) over 100k and
  then 1M messages in 1,000 sessions, for a common platform (10 % of messages) and a rarer one
  (1 %), vs the same SQL by hand.

Long write transactions (SQLite), each timed while two witnesses watch:

* ``delete_messages_by_timestamps`` of 600,000 timestamps on a session of 600,000 messages,
  and of the same 600,000-entry list on a session of 1,000 (the cost must follow the rows,
  not the list);
* ``update_message_content`` over a session of 300,000 messages (every one changes);
* witnesses: a second *process* writing to the same file in a loop (its own 1 s busy timeout)
  counts the "database is locked" errors it gets, and a task in this process reads another
  session in a loop and records its slowest read.

``--only-long-writes`` runs just that part (to compare a checkout of another revision).

MongoDB, at a smaller size (every call is a round trip to the server; nx-27017 on loopback
unless ``$AALIS_TEST_MONGODB_URI`` names one): the same three operations, figures only (the
side-by-side with hand-written pymongo is ``mongodb_vs_pymongo.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sqlite3
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    Report,
    interleaved,
    mongodb_server,
    parse_args,
    print_table,
    ratio,
    run,
    scratch_dir,
    sync,
    vm_steps,
)

NAME = "bulk_ops"
BASE_TS = 1_700_000_000_000
TEXT = "a message of ordinary length, about as long as one sentence of a chat turn would be"


def platform_of(i: int) -> str:
    if i % 100 == 95:
        return "rare"
    return "telegram" if i % 10 == 3 else "cli" if i % 10 < 7 else "web"


def message(i: int, archived: bool = False) -> Any:
    from aalis_api_memory import StoredMessage
    from aalis_schema_message import Message

    return StoredMessage(
        Message(
            role="user" if i % 2 == 0 else "assistant",
            content=f"{i} {TEXT}",
            timestamp=BASE_TS + i * 10,
            metadata={"platform": platform_of(i)},
        ),
        archived,
    )


def ops(batch: int, n: int = 500) -> list[Any]:
    from aalis_api_memory import Put

    return [
        Put(
            "bench",
            f"key-{i:04d}",
            {"batch": batch, "i": i, "text": TEXT, "tags": ["a", "b"], "score": i / 7},
        )
        for i in range(n)
    ]


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return (time.perf_counter() - start) * 1000


# -- SQLite ---------------------------------------------------------------------------------


class Hand:
    """The same operations written by hand with ``sqlite3`` on the memory-sqlite file."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA synchronous=NORMAL")

    def archive(self, session_id: str, count: int) -> int:
        self.conn.execute("BEGIN IMMEDIATE")
        cur = self.conn.execute(
            "UPDATE messages SET archived = 1 WHERE seq IN (SELECT seq FROM messages"
            " WHERE session_id = ? AND archived = 0 ORDER BY timestamp, seq LIMIT ?)",
            (session_id, count),
        )
        self.conn.execute("COMMIT")
        return cur.rowcount

    def commit_metadata(self, batch: list[Any]) -> None:
        now = int(time.time() * 1000)
        rows = [(op.namespace, op.key, json.dumps(op.data), now) for op in batch]
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            "INSERT INTO metadata (namespace, key, data, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
            rows,
        )
        self.conn.execute("COMMIT")

    def recent(self, platform: str, limit: int = 50) -> list[tuple[str, dict[str, Any]]]:
        rows = self.conn.execute(
            "SELECT session_id, data FROM messages WHERE archived = 0 AND platform = ?"
            " AND role IN ('user', 'assistant') ORDER BY timestamp DESC, seq DESC LIMIT ?",
            (platform, limit),
        ).fetchall()
        return [(sid, json.loads(data)) for sid, data in reversed(rows)]


async def sqlite_part(args: argparse.Namespace, report: Report, workdir: Path) -> list[list[Any]]:
    from aalis_plugin_memory_sqlite import SqliteMemory

    span = 1_000 if args.quick else 10_000
    reps = 2 if args.quick else 5
    store = SqliteMemory(workdir / "memory.db")
    await store.open()
    hand = Hand(workdir / "memory.db")
    table: list[list[Any]] = []
    try:
        # archive_span
        ours_ms: list[float] = []
        hand_ms: list[float] = []
        for r in range(reps):
            for who in ("ours", "hand"):
                await store.import_messages(
                    f"arch-{who}-{r}", [message(i) for i in range(2 * span)]
                )
            ours_ms.append(await timed(lambda r=r: store.archive_span(f"arch-ours-{r}", span)))  # type: ignore[misc]
            start = time.perf_counter()
            assert hand.archive(f"arch-hand-{r}", span) == span
            hand_ms.append((time.perf_counter() - start) * 1000)
            assert await store.count_history(f"arch-ours-{r}") == span
        o, h = statistics.median(ours_ms), statistics.median(hand_ms)
        report.row(
            backend="sqlite",
            operation=f"archive_span({span:,})",
            median_ms=round(o, 2),
            hand_written_ms=round(h, 2),
            vs_hand_written=ratio(o, h),
            runs=reps,
        )
        table.append(
            [
                "sqlite",
                f"archive_span {span:,} of {2 * span:,}",
                round(o, 2),
                round(h, 2),
                ratio(o, h),
                None,
                None,
            ]
        )

        # commit_metadata
        batch_no = 0

        async def ours_commit() -> None:
            nonlocal batch_no
            batch_no += 1
            await store.commit_metadata(ops(batch_no))

        def hand_commit() -> None:
            hand.commit_metadata(ops(-1))

        stats = await interleaved(
            {"ours": ours_commit, "hand": sync(hand_commit)},
            rounds=3 if args.quick else 10,
            calls_per_round=2,
            warmup=1,
        )
        o, h = stats["ours"]["median_us"] / 1000, stats["hand"]["median_us"] / 1000
        assert len(await store.list_metadata_keys("bench")) == 500
        report.row(
            backend="sqlite",
            operation="commit_metadata(500 puts)",
            median_ms=round(o, 2),
            hand_written_ms=round(h, 2),
            vs_hand_written=ratio(o, h),
            runs=stats["ours"]["n"],
        )
        table.append(
            [
                "sqlite",
                "commit_metadata 500 puts",
                round(o, 2),
                round(h, 2),
                ratio(o, h),
                None,
                None,
            ]
        )

    finally:
        hand.conn.close()
        await store.close()
    table += await cross_session(args, report, workdir)
    return table


async def cross_session(args: argparse.Namespace, report: Report, workdir: Path) -> list[list[Any]]:
    """The platform-filtered cross-session query on a 100k and a 1M table, timed interleaved."""
    from aalis_api_memory import RecentMessagesQuery
    from aalis_plugin_memory_sqlite import SqliteMemory

    sizes = [2_000, 20_000] if args.quick else [100_000, 1_000_000]
    sessions = 100 if args.quick else 1_000
    opened: dict[int, tuple[Any, Hand, float]] = {}
    table: list[list[Any]] = []
    try:
        for size in sizes:
            print(f"building {size:,} messages in {sessions:,} sessions ...", flush=True)
            store = SqliteMemory(workdir / f"cross-{size}.db")
            await store.open()
            per_session = size // sessions
            start = time.perf_counter()
            for s in range(sessions):
                # 90 % of each session archived, as in a long-lived deployment.
                await store.import_messages(
                    f"user-{s:04d}",
                    [
                        message(s * 1_000_000 + j, archived=j < int(per_session * 0.9))
                        for j in range(per_session)
                    ],
                )
            opened[size] = (store, Hand(workdir / f"cross-{size}.db"), time.perf_counter() - start)
        contenders: dict[str, Any] = {}
        for size, (store, hand, _) in opened.items():
            for platform in ("telegram", "rare"):
                query = RecentMessagesQuery(limit=50, platform=platform)
                ours_result = await store.get_recent_messages_across_sessions(query)
                assert [r.message.content for r in ours_result] == [
                    d["content"] for _, d in hand.recent(platform)
                ]
                assert len(ours_result) == (50 if not args.quick else len(ours_result))

                async def ours_query(store: Any = store, q: Any = query) -> Any:
                    return await store.get_recent_messages_across_sessions(q)

                contenders[f"ours {size} {platform}"] = ours_query
                contenders[f"hand {size} {platform}"] = sync(
                    lambda hand=hand, p=platform: hand.recent(p)
                )  # type: ignore[misc]
        stats = await interleaved(contenders, rounds=3 if args.quick else 20, calls_per_round=5)
        for size, (store, hand, build_s) in opened.items():
            for platform in ("telegram", "rare"):
                o = stats[f"ours {size} {platform}"]["median_us"] / 1000
                h = stats[f"hand {size} {platform}"]["median_us"] / 1000
                steps = await store.run_on_connection(
                    lambda conn, store=store, p=platform: vm_steps(
                        conn,
                        lambda: store.engine.get_recent_messages_across_sessions(
                            50, ("user", "assistant"), None, None, None, p, None
                        ),
                    )
                )
                hand_steps = vm_steps(hand.conn, lambda hand=hand, p=platform: hand.recent(p))  # type: ignore[misc]
                label = f"recent across sessions, platform={platform}, {size:,} msgs"
                report.row(
                    backend="sqlite",
                    operation=label,
                    median_ms=round(o, 3),
                    hand_written_ms=round(h, 3),
                    vs_hand_written=ratio(o, h),
                    runs=stats[f"ours {size} {platform}"]["n"],
                    table_messages=size,
                    build_s=round(build_s, 1),
                    vm_steps=steps,
                    hand_written_vm_steps=hand_steps,
                )
                table.append(
                    ["sqlite", label, round(o, 3), round(h, 3), ratio(o, h), steps, hand_steps]
                )
        for platform in ("telegram", "rare"):
            rows = [
                r
                for r in report.data["results"]
                if r["backend"] == "sqlite" and f"platform={platform}" in r["operation"]
            ]
            report.ratio(
                f"sqlite_recent_{platform}_time_{sizes[-1]}_vs_{sizes[0]}",
                ratio(rows[-1]["median_ms"], rows[0]["median_ms"]),
            )
            report.ratio(
                f"sqlite_recent_{platform}_vm_steps_{sizes[-1]}_vs_{sizes[0]}",
                ratio(rows[-1]["vm_steps"], rows[0]["vm_steps"]),
            )
    finally:
        for store, hand, _ in opened.values():
            hand.conn.close()
            await store.close()
    return table


# -- long write transactions ---------------------------------------------------------------

WITNESS = r"""
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=1.0)
conn.execute("PRAGMA busy_timeout = 1000")
stop = sys.argv[2]
locked = attempts = 0
worst = 0.0
i = 0
print("ready", flush=True)
import os
while not os.path.exists(stop):
    i += 1
    attempts += 1
    start = time.perf_counter()
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO metadata (namespace, key, data, updated_at) VALUES (?, ?, '{}', 0)"
            " ON CONFLICT (namespace, key) DO UPDATE SET updated_at = excluded.updated_at",
            ("bench-witness", str(i % 50)),
        )
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        locked += 1
    worst = max(worst, time.perf_counter() - start)
    time.sleep(0.01)
print(f"{locked} {attempts} {worst * 1000:.1f}", flush=True)
"""


class Witnesses:
    """A writer process on the same file and a reader task in this process, both timed."""

    def __init__(self, store: Any, workdir: Path, read_session: str) -> None:
        self.store = store
        self.workdir = workdir
        self.read_session = read_session
        self.script = workdir / "witness.py"
        self.script.write_text(WITNESS, encoding="utf-8")

    async def around(self, operation: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        import subprocess

        stop = self.workdir / f"stop-{uuid.uuid4().hex}"
        child = subprocess.Popen(  # noqa: ASYNC220 - a benchmark witness, started once
            [sys.executable, str(self.script), str(self.store.path), str(stop)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        await asyncio.sleep(0.3)  # the witness is writing steadily before the operation
        worst_read = 0.0
        done = False

        async def reader() -> None:
            nonlocal worst_read
            while not done:
                start = time.perf_counter()
                await self.store.get_history(self.read_session, 10)
                worst_read = max(worst_read, time.perf_counter() - start)
                await asyncio.sleep(0.01)

        reading = asyncio.ensure_future(reader())
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        result = await operation()
        elapsed = time.perf_counter() - start
        done = True
        await reading
        await asyncio.sleep(0.3)
        stop.write_text("", encoding="utf-8")
        out, _ = child.communicate(timeout=60)
        locked, attempts, worst_write = out.split()
        return {
            "result": result,
            "ms": round(elapsed * 1000, 1),
            "witness_locked_errors": int(locked),
            "witness_attempts": int(attempts),
            "witness_worst_write_ms": float(worst_write),
            "worst_read_ms": round(worst_read * 1000, 1),
        }


async def long_writes(args: argparse.Namespace, report: Report, workdir: Path) -> list[list[Any]]:
    from aalis_api_memory import StoredMessage
    from aalis_plugin_memory_sqlite import SqliteMemory
    from aalis_schema_message import Message

    deleted = 6_000 if args.quick else 600_000
    rewritten = 3_000 if args.quick else 300_000
    small = 1_000
    chunk = 50_000

    def plain(i: int) -> Any:
        return StoredMessage(
            Message(role="user", content=f"{i} {TEXT}", timestamp=BASE_TS + i * 10), False
        )

    async def build(store: Any, session_id: str, count: int) -> None:
        for first in range(0, count, chunk):
            await store.import_messages(
                session_id, [plain(i) for i in range(first, min(count, first + chunk))]
            )

    table: list[list[Any]] = []
    store = SqliteMemory(workdir / "long-writes.db", busy_timeout_ms=5000)
    await store.open()
    try:
        await build(store, "reader", 200)
        witnesses = Witnesses(store, workdir, "reader")
        stamps = [BASE_TS + i * 10 for i in range(deleted)]
        cases: list[tuple[str, str, int, Callable[[], Awaitable[Any]]]] = []

        print(f"building {deleted:,} + {small:,} + {rewritten:,} messages ...", flush=True)
        await build(store, "delete-big", deleted)
        await build(store, "delete-small", small)
        await build(store, "rewrite", rewritten)
        cases.append(
            (
                f"delete_messages_by_timestamps({deleted:,} ts) on {deleted:,} msgs",
                "delete_big",
                deleted,
                lambda: store.delete_messages_by_timestamps("delete-big", stamps),
            )
        )
        cases.append(
            (
                f"delete_messages_by_timestamps({deleted:,} ts) on {small:,} msgs",
                "delete_small",
                small,
                lambda: store.delete_messages_by_timestamps("delete-small", stamps),
            )
        )
        cases.append(
            (
                f"update_message_content over {rewritten:,} msgs",
                "rewrite",
                rewritten,
                lambda: store.update_message_content("rewrite", "ordinary", "usual", math.inf),
            )
        )
        for label, key, expected, operation in cases:
            print(f"{label} ...", flush=True)
            seen = await witnesses.around(operation)
            assert seen["result"] == expected, (label, seen["result"])
            report.row(
                backend="sqlite",
                operation=label,
                median_ms=seen["ms"],
                runs=1,
                witness_locked_errors=seen["witness_locked_errors"],
                witness_attempts=seen["witness_attempts"],
                witness_worst_write_ms=seen["witness_worst_write_ms"],
                worst_concurrent_read_ms=seen["worst_read_ms"],
            )
            report.ratio(f"sqlite_{key}_ms", seen["ms"])
            report.ratio(f"sqlite_{key}_witness_locked_errors", seen["witness_locked_errors"])
            report.ratio(f"sqlite_{key}_worst_concurrent_read_ms", seen["worst_read_ms"])
            table.append(
                [
                    label,
                    seen["ms"],
                    seen["witness_locked_errors"],
                    seen["witness_attempts"],
                    seen["witness_worst_write_ms"],
                    seen["worst_read_ms"],
                ]
            )
    finally:
        await store.close()
    print_table(
        "long write transactions (one run each; witness = a second process writing every 10 ms"
        " with a 1 s busy timeout)",
        [
            "operation",
            "ms",
            "witness 'locked'",
            "witness writes",
            "witness worst ms",
            "worst read ms",
        ],
        table,
    )
    return []


# -- MongoDB --------------------------------------------------------------------------------


async def mongodb_part(args: argparse.Namespace, report: Report, workdir: Path) -> list[list[Any]]:
    from aalis_api_memory import RecentMessagesQuery
    from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory

    table: list[list[Any]] = []
    async with mongodb_server(workdir) as (uri, server):
        report.set_server(
            {
                "sqlite": {"kind": "sqlite3 (in process)", "version": sqlite3.sqlite_version},
                "mongodb": server,
            }
        )
        database = f"bench_{uuid.uuid4().hex[:12]}"
        store = await MongoMemory.connect(MongoConfig(uri=uri, database=database))
        try:
            span = 50 if args.quick else 2_000
            reps = 2 if args.quick else 3
            times = []
            for r in range(reps):
                await store.import_messages(f"arch-{r}", [message(i) for i in range(2 * span)])
                times.append(await timed(lambda r=r: store.archive_span(f"arch-{r}", span)))  # type: ignore[misc]
            o = statistics.median(times)
            report.row(
                backend="mongodb",
                operation=f"archive_span({span:,})",
                median_ms=round(o, 2),
                runs=reps,
            )
            table.append(
                [
                    "mongodb",
                    f"archive_span {span:,} of {2 * span:,}",
                    round(o, 2),
                    None,
                    None,
                    None,
                    None,
                ]
            )

            n_ops = 50 if args.quick else 500
            times = [
                await timed(lambda b=b: store.commit_metadata(ops(b, n_ops)))
                for b in range(2 if args.quick else 5)
            ]  # type: ignore[misc]
            o = statistics.median(times)
            report.row(
                backend="mongodb",
                operation=f"commit_metadata({n_ops} puts)",
                median_ms=round(o, 2),
                runs=len(times),
            )
            table.append(
                ["mongodb", f"commit_metadata {n_ops} puts", round(o, 2), None, None, None, None]
            )

            size = 500 if args.quick else 20_000
            sessions = 10 if args.quick else 100
            per_session = size // sessions
            for s in range(sessions):
                await store.import_messages(
                    f"user-{s:04d}",
                    [
                        message(s * 1_000_000 + j, archived=j < int(per_session * 0.9))
                        for j in range(per_session)
                    ],
                )
            for platform in ("telegram", "rare"):
                query = RecentMessagesQuery(limit=50, platform=platform)
                times = [
                    await timed(lambda q=query: store.get_recent_messages_across_sessions(q))
                    for _ in range(5)
                ]  # type: ignore[misc]
                o = statistics.median(times)
                label = f"recent across sessions, platform={platform}, {size:,} msgs"
                report.row(
                    backend="mongodb",
                    operation=label,
                    median_ms=round(o, 2),
                    runs=len(times),
                    table_messages=size,
                )
                table.append(["mongodb", label, round(o, 2), None, None, None, None])
        finally:
            client = store._client
            await client.drop_database(database)
            await store.close()
            await client.close()
    return table


async def main(args: argparse.Namespace) -> None:
    report = Report(NAME, args, {"quick": args.quick, "only_long_writes": ONLY_LONG_WRITES})
    report.set_server(
        {
            "sqlite": {"kind": "sqlite3 (in process)", "version": sqlite3.sqlite_version},
            "mongodb": None,
        }
    )
    rows: list[list[Any]] = []
    with scratch_dir("bulk") as workdir:
        print("long write transactions ...", flush=True)
        await long_writes(args, report, workdir)
        if ONLY_LONG_WRITES:
            report.finish()
            return
        print("sqlite ...", flush=True)
        rows += await sqlite_part(args, report, workdir)
        print("mongodb ...", flush=True)
        try:
            rows += await mongodb_part(args, report, workdir)
        except (RuntimeError, ImportError) as exc:
            report.note(f"mongodb not measured: {exc}")
    print_table(
        "bulk operations, median ms (hand-written sqlite3 on the same file beside memory-sqlite)",
        [
            "backend",
            "operation",
            "ours ms",
            "hand-written ms",
            "ours/hand",
            "VM steps",
            "VM steps hand",
        ],
        rows,
    )
    arch = next(
        r
        for r in report.data["results"]
        if r["backend"] == "sqlite" and r["operation"].startswith("archive_span")
    )
    meta = next(
        r
        for r in report.data["results"]
        if r["backend"] == "sqlite" and r["operation"].startswith("commit_metadata")
    )
    report.ratio("sqlite_archive_span_vs_hand_written", arch["vs_hand_written"])
    report.ratio("sqlite_commit_metadata_vs_hand_written", meta["vs_hand_written"])
    for key in [
        k for k in report.data["ratios"] if k.startswith("sqlite_recent_")
    ]:  # time and VM steps
        value = report.data["ratios"][key]
        report.target(
            f"cross-session query flat ({key})",
            "<= 1.5x",
            value,
            None if value is None else value <= 1.5,
        )
    report.finish()


#: Run only the long-write part (``--only-long-writes``), e.g. on a checkout of ``main``.
ONLY_LONG_WRITES = "--only-long-writes" in sys.argv

if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--only-long-writes"]
    run(main, parse_args(NAME, __doc__.splitlines()[0], argv))
