"""get_history(limit=50) on sessions of 10k / 100k / 1M messages (90 % archived), side by side.

Contenders, measured interleaved in one run on the same data:

* **memory-sqlite**: ``await store.get_history(sid, 50)`` through the public API (validation,
  the worker thread hop, decoding into ``Message`` objects included);
* **hand-written sqlite3**: the same schema's indexed query written by hand on a second
  connection to the same file (``WHERE session_id=? AND archived=0 ORDER BY timestamp DESC,
  seq DESC LIMIT 50``, rows reversed and ``json.loads``-ed): the floor for this design;
* **LangChain** ``SQLChatMessageHistory(...).messages[-50:]`` on the same messages loaded into
  LangChain's own table (which has no archive: it holds the whole session, as a LangChain user's
  would). Large sessions are slow, so it runs in a child process killed at ``--budget``.

Beside them, for explanation only: the hand-written query run through ``asyncio.to_thread`` (what
any backend that keeps blocking calls off the event loop pays on top of the query).

Targets (SPEC §11): memory-sqlite at most 2x the hand-written query; at least 20x faster than
LangChain at 100k; flat (1M / 10k at most 1.5x) as the session grows.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _langchain
from _harness import (
    Report,
    fmt,
    interleaved,
    parse_args,
    print_table,
    ratio,
    run,
    scratch_dir,
    sync,
)

NAME = "history_vs_peers"
LIMIT = 50
SESSION = "bench-session"
ARCHIVED_SHARE = 0.9
BASE_TS = 1_700_000_000_000

_WORDS = ["the", "user", "asked", "about", "their", "order", "and", "the", "assistant", "looked", "it", "up", "in", "the", "system,", "found", "the", "parcel", "in", "transit", "and", "promised", "an", "update", "tomorrow", "morning", "before", "ten", "o'clock", "local", "time"]


def content(i: int) -> str:
    """Deterministic text of realistic length (~100-160 characters), different per message."""
    start = i % len(_WORDS)
    words = [_WORDS[(start + k) % len(_WORDS)] for k in range(18 + i % 8)]
    return f"#{i} " + " ".join(words)


def role(i: int) -> str:
    return "user" if i % 2 == 0 else "assistant"


def batches(total: int, size: int) -> Iterator[range]:
    for start in range(0, total, size):
        yield range(start, min(total, start + size))


async def load_memory_sqlite(path: Path, total: int) -> tuple[Any, float]:
    """Open a memory-sqlite store at ``path`` and import the session through its API."""
    from aalis_api_memory import StoredMessage
    from aalis_plugin_memory_sqlite import SqliteMemory
    from aalis_schema_message import Message

    store = SqliteMemory(path)
    await store.open()
    archived_until = int(total * ARCHIVED_SHARE)
    start = time.perf_counter()
    for chunk in batches(total, 50_000):
        records = [
            StoredMessage(
                Message(
                    role=role(i),
                    content=content(i),
                    timestamp=BASE_TS + i * 1000,
                    metadata={"platform": "cli"} if i % 3 == 0 else None,
                ),
                archived=i < archived_until,
            )
            for i in chunk
        ]
        await store.import_messages(SESSION, records)
    return store, time.perf_counter() - start


class HandWritten:
    """The query a developer would write against this schema with the ``sqlite3`` module."""

    SQL = (
        "SELECT data FROM messages WHERE session_id = ? AND archived = 0"
        " ORDER BY timestamp DESC, seq DESC LIMIT ?"
    )

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")

    def last(self, limit: int = LIMIT) -> list[dict[str, Any]]:
        rows = self.conn.execute(self.SQL, (SESSION, limit)).fetchall()
        return [json.loads(data) for (data,) in reversed(rows)]

    def plan(self) -> str:
        rows = self.conn.execute("EXPLAIN QUERY PLAN " + self.SQL, (SESSION, LIMIT)).fetchall()
        return "; ".join(str(r[-1]) for r in rows)

    def close(self) -> None:
        self.conn.close()


async def measure_size(
    total: int, workdir: Path, args: argparse.Namespace, report: Report, lc_ok: bool
) -> dict[str, Any]:
    store, build_s = await load_memory_sqlite(workdir / "memory.db", total)
    hand = HandWritten(workdir / "memory.db")
    try:
        ours = await store.get_history(SESSION, LIMIT)
        floor = hand.last()
        # Same answer, or the comparison means nothing.
        assert [m.content for m in ours] == [d["content"] for d in floor], "results differ"
        assert len(ours) == LIMIT
        rounds, per_round = (3, 5) if args.quick else (20, 25)

        async def ours_call() -> Any:
            return await store.get_history(SESSION, LIMIT)

        async def hand_hop() -> Any:
            return await asyncio.to_thread(hand.last)

        stats = await interleaved(
            {
                "memory-sqlite": ours_call,
                "hand-written sqlite3": sync(hand.last),
                "hand-written sqlite3 + to_thread": hand_hop,
            },
            rounds=rounds,
            calls_per_round=per_round,
        )
        plan = hand.plan()
    finally:
        hand.close()
        await store.close()

    lc: dict[str, Any] = {"median_us": None, "note": None}
    if lc_ok:
        lc_path = workdir / "langchain.db"
        start = time.perf_counter()
        _langchain.load(lc_path, SESSION, ((role(i), content(i)) for i in range(total)))
        lc_build_s = time.perf_counter() - start
        budget = args.budget if args.budget is not None else (30.0 if args.quick else 240.0)
        calls = 1 if args.quick else 5 if total <= 10_000 else 3 if total <= 100_000 else 2
        measured = _langchain.measure_last(lc_path, SESSION, LIMIT, calls, budget)
        samples = measured["samples_ns"]
        if measured["timed_out"] or not samples:
            lc["note"] = f"LangChain did not answer within the {budget:.0f} s budget at {total:,} messages"
            report.note(lc["note"])
        else:
            samples.sort()
            lc["median_us"] = round(samples[len(samples) // 2] / 1000, 1)
            lc["calls"] = len(samples)
        lc["build_s"] = round(lc_build_s, 1)
    return {
        "messages": total,
        "active": total - int(total * ARCHIVED_SHARE),
        "build_s": round(build_s, 1),
        "memory_sqlite": stats["memory-sqlite"],
        "hand_written": stats["hand-written sqlite3"],
        "hand_written_thread": stats["hand-written sqlite3 + to_thread"],
        "langchain": lc,
        "query_plan": plan,
    }


async def main(args: argparse.Namespace) -> None:
    sizes = [1_000, 5_000] if args.quick else [10_000, 100_000, 1_000_000]
    lc_ok, lc_reason = _langchain.available()
    report = Report(
        NAME,
        args,
        {"sizes": sizes, "limit": LIMIT, "archived_share": ARCHIVED_SHARE, "langchain": lc_ok},
    )
    report.set_server({"kind": "sqlite3 (in process)", "version": sqlite3.sqlite_version})
    if not lc_ok:
        report.note(lc_reason)

    results: list[dict[str, Any]] = []
    for total in sizes:
        print(f"building and measuring {total:,} messages ...", flush=True)
        with scratch_dir(f"history-{total}") as workdir:
            result = await measure_size(total, workdir, args, report, lc_ok)
        results.append(result)
        ours = result["memory_sqlite"]["median_us"]
        floor = result["hand_written"]["median_us"]
        lc_us = result["langchain"]["median_us"]
        report.row(
            messages=total,
            memory_sqlite_median_us=ours,
            memory_sqlite_p95_us=result["memory_sqlite"]["p95_us"],
            hand_written_median_us=floor,
            hand_written_to_thread_median_us=result["hand_written_thread"]["median_us"],
            langchain_median_us=lc_us,
            memory_sqlite_vs_hand_written=ratio(ours, floor),
            memory_sqlite_vs_hand_written_to_thread=ratio(ours, result["hand_written_thread"]["median_us"]),
            langchain_vs_memory_sqlite=ratio(lc_us, ours) if lc_us else None,
            build_s=result["build_s"],
            langchain_build_s=result["langchain"].get("build_s"),
            langchain_note=result["langchain"]["note"],
            query_plan=result["query_plan"],
            detail={k: result[k] for k in ("memory_sqlite", "hand_written", "hand_written_thread")},
        )

    rows = []
    for r in report.data["results"]:
        rows.append(
            [
                f"{r['messages']:,}",
                r["memory_sqlite_median_us"],
                r["memory_sqlite_p95_us"],
                r["hand_written_median_us"],
                r["hand_written_to_thread_median_us"],
                r["langchain_median_us"] if r["langchain_median_us"] else ("timeout" if r["langchain_note"] else "-"),
                r["memory_sqlite_vs_hand_written"],
                r["memory_sqlite_vs_hand_written_to_thread"],
                r["langchain_vs_memory_sqlite"],
            ]
        )
    print_table(
        f"get_history(limit={LIMIT}), 90 % archived, median µs per call (interleaved)",
        ["messages", "memory-sqlite", "p95", "hand-written", "hand+to_thread", "LangChain", "ours/hand", "ours/(hand+thread)", "LangChain/ours"],
        rows,
    )

    first, last = report.data["results"][0], report.data["results"][-1]
    worst_hand = max((r["memory_sqlite_vs_hand_written"] or 0) for r in report.data["results"])
    flat = ratio(last["memory_sqlite_median_us"], first["memory_sqlite_median_us"])
    report.ratio("memory_sqlite_vs_hand_written_worst", worst_hand)
    report.ratio(f"memory_sqlite_{last['messages']}_vs_{first['messages']}", flat)
    mid = next((r for r in report.data["results"] if r["messages"] == 100_000), None)
    lc_speedup = mid["langchain_vs_memory_sqlite"] if mid else None
    report.ratio("langchain_vs_memory_sqlite_at_100k", lc_speedup)
    report.target("get_history vs hand-written sqlite3", "<= 2x", worst_hand, worst_hand <= 2.0 if worst_hand else None)
    report.target(
        "LangChain / memory-sqlite at 100k",
        ">= 20x",
        lc_speedup,
        None if lc_speedup is None else lc_speedup >= 20,
    )
    report.target(
        f"flat: {fmt(last['messages'])} vs {fmt(first['messages'])} messages",
        "<= 1.5x",
        flat,
        None if flat is None else flat <= 1.5,
    )
    with contextlib.suppress(Exception):
        report.data["parameters"]["query_plan"] = first["query_plan"]
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
