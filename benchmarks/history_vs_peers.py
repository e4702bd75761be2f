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

Targets (docs/performance.md): memory-sqlite at most 2x the hand-written query; at least 20x
faster than
LangChain at 100k; flat (1M / 10k at most 1.5x) as the session grows.
"""

from __future__ import annotations

import argparse
import asyncio
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
    vm_steps,
)

NAME = "history_vs_peers"
LIMIT = 50
SESSION = "bench-session"
ARCHIVED_SHARE = 0.9
BASE_TS = 1_700_000_000_000

_WORDS = [
    "the",
    "user",
    "asked",
    "about",
    "their",
    "order",
    "and",
    "the",
    "assistant",
    "looked",
    "it",
    "up",
    "in",
    "the",
    "system,",
    "found",
    "the",
    "parcel",
    "in",
    "transit",
    "and",
    "promised",
    "an",
    "update",
    "tomorrow",
    "morning",
    "before",
    "ten",
    "o'clock",
    "local",
    "time",
]


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


async def measure_langchain(
    total: int, workdir: Path, args: argparse.Namespace, report: Report
) -> dict[str, Any]:
    lc: dict[str, Any] = {"median_us": None, "note": None}
    lc_path = workdir / f"langchain-{total}.db"
    start = time.perf_counter()
    _langchain.load(lc_path, SESSION, ((role(i), content(i)) for i in range(total)))
    lc["build_s"] = round(time.perf_counter() - start, 1)
    budget = args.budget if args.budget is not None else (30.0 if args.quick else 300.0)
    calls = 1 if args.quick else 5 if total <= 10_000 else 3 if total <= 100_000 else 2
    measured = _langchain.measure_last(lc_path, SESSION, LIMIT, calls, budget)
    samples = sorted(measured["samples_ns"])
    if measured["timed_out"] or not samples:
        lc["note"] = (
            f"LangChain did not answer within the {budget:.0f} s budget at {total:,} messages"
        )
        report.note(lc["note"])
    else:
        lc["median_us"] = round(samples[len(samples) // 2] / 1000, 1)
        lc["calls"] = len(samples)
    lc_path.unlink(missing_ok=True)
    return lc


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

    with scratch_dir("history") as workdir:
        # 1. Build every size first, so that all sizes and contenders are then timed
        #    interleaved: a "flat" ratio between sizes measured minutes apart would mostly
        #    measure how the machine's load changed in between.
        opened: dict[int, tuple[Any, HandWritten, float]] = {}
        for total in sizes:
            print(f"building {total:,} messages ...", flush=True)
            store, build_s = await load_memory_sqlite(workdir / f"memory-{total}.db", total)
            hand = HandWritten(workdir / f"memory-{total}.db")
            ours = await store.get_history(SESSION, LIMIT)
            # Same answer, or the comparison means nothing.
            assert [m.content for m in ours] == [d["content"] for d in hand.last()], (
                "results differ"
            )
            assert len(ours) == LIMIT
            opened[total] = (store, hand, build_s)

        contenders: dict[str, Any] = {}
        for total, (store, hand, _) in opened.items():

            async def ours_call(store: Any = store) -> Any:
                return await store.get_history(SESSION, LIMIT)

            async def hand_hop(hand: HandWritten = hand) -> Any:
                return await asyncio.to_thread(hand.last)

            contenders[f"ours {total}"] = ours_call
            contenders[f"hand {total}"] = sync(hand.last)
            contenders[f"thread {total}"] = hand_hop
        rounds, per_round = (3, 5) if args.quick else (30, 20)
        print(f"timing {len(contenders)} contenders interleaved ...", flush=True)
        stats = await interleaved(contenders, rounds=rounds, calls_per_round=per_round)

        measured: dict[int, dict[str, Any]] = {}
        for total, (store, hand, build_s) in opened.items():
            ours_steps = await store.run_on_connection(
                lambda conn, store=store: vm_steps(
                    conn, lambda: store.engine.get_history(SESSION, LIMIT)
                )
            )
            measured[total] = {
                "build_s": round(build_s, 1),
                "plan": hand.plan(),
                "steps_ours": ours_steps,
                "steps_hand": vm_steps(hand.conn, hand.last),
            }
            hand.close()
            await store.close()
            (workdir / f"memory-{total}.db").unlink(missing_ok=True)

        # 2. LangChain, per size, in a child process bounded by the budget.
        for total in sizes:
            if lc_ok:
                print(f"LangChain at {total:,} messages ...", flush=True)
                measured[total]["langchain"] = await measure_langchain(total, workdir, args, report)
            else:
                measured[total]["langchain"] = {"median_us": None, "note": lc_reason}

    rows = []
    for total in sizes:
        m = measured[total]
        ours, floor, hop = stats[f"ours {total}"], stats[f"hand {total}"], stats[f"thread {total}"]
        lc_us = m["langchain"]["median_us"]
        report.row(
            messages=total,
            memory_sqlite_median_us=ours["median_us"],
            memory_sqlite_p95_us=ours["p95_us"],
            hand_written_median_us=floor["median_us"],
            hand_written_to_thread_median_us=hop["median_us"],
            langchain_median_us=lc_us,
            memory_sqlite_vs_hand_written=ratio(ours["median_us"], floor["median_us"]),
            memory_sqlite_vs_hand_written_to_thread=ratio(ours["median_us"], hop["median_us"]),
            langchain_vs_memory_sqlite=ratio(lc_us, ours["median_us"]) if lc_us else None,
            vm_steps_memory_sqlite=m["steps_ours"],
            vm_steps_hand_written=m["steps_hand"],
            build_s=m["build_s"],
            langchain_build_s=m["langchain"].get("build_s"),
            langchain_calls=m["langchain"].get("calls"),
            langchain_note=m["langchain"]["note"],
            query_plan=m["plan"],
            detail={"memory_sqlite": ours, "hand_written": floor, "hand_written_to_thread": hop},
        )
        r = report.data["results"][-1]
        rows.append(
            [
                f"{total:,}",
                r["memory_sqlite_median_us"],
                r["memory_sqlite_p95_us"],
                r["hand_written_median_us"],
                r["hand_written_to_thread_median_us"],
                lc_us if lc_us else ("timeout" if lc_ok else "-"),
                r["memory_sqlite_vs_hand_written"],
                r["memory_sqlite_vs_hand_written_to_thread"],
                r["langchain_vs_memory_sqlite"],
                r["vm_steps_memory_sqlite"],
                r["vm_steps_hand_written"],
            ]
        )
    print_table(
        f"get_history(limit={LIMIT}), 90 % archived, median µs per call (all sizes interleaved)",
        [
            "messages",
            "memory-sqlite",
            "p95",
            "hand-written",
            "hand+to_thread",
            "LangChain",
            "ours/hand",
            "ours/(hand+thread)",
            "LangChain/ours",
            "VM steps ours",
            "VM steps hand",
        ],
        rows,
    )

    results = report.data["results"]
    first, last = results[0], results[-1]
    worst_hand = max((r["memory_sqlite_vs_hand_written"] or 0) for r in results)
    flat = ratio(last["memory_sqlite_median_us"], first["memory_sqlite_median_us"])
    flat_steps = ratio(last["vm_steps_memory_sqlite"], first["vm_steps_memory_sqlite"])
    report.ratio("memory_sqlite_vs_hand_written_worst", worst_hand)
    report.ratio(f"memory_sqlite_time_{last['messages']}_vs_{first['messages']}", flat)
    report.ratio(f"memory_sqlite_vm_steps_{last['messages']}_vs_{first['messages']}", flat_steps)
    mid = next((r for r in results if r["messages"] == 100_000), None)
    lc_speedup = mid["langchain_vs_memory_sqlite"] if mid else None
    report.ratio("langchain_vs_memory_sqlite_at_100k", lc_speedup)
    report.target(
        "get_history vs hand-written sqlite3",
        "<= 2x",
        worst_hand,
        worst_hand <= 2.0 if worst_hand else None,
    )
    report.target(
        "LangChain / memory-sqlite at 100k",
        ">= 20x",
        lc_speedup,
        None if lc_speedup is None else lc_speedup >= 20,
    )
    report.target(
        f"flat, time: {fmt(last['messages'])} vs {fmt(first['messages'])} messages",
        "<= 1.5x",
        flat,
        None if flat is None else flat <= 1.5,
    )
    report.target(
        f"flat, SQLite VM steps: {fmt(last['messages'])} vs {fmt(first['messages'])}",
        "<= 1.5x",
        flat_steps,
        None if flat_steps is None else flat_steps <= 1.5,
    )
    report.data["parameters"]["query_plan"] = first["query_plan"]
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
