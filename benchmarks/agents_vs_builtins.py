"""The agent-framework adapters beside the frameworks' own SQLite stores, on the same data.

- ``AalisSession.get_items(limit=50)`` (memory-sqlite through a host) beside the OpenAI
  Agents SDK's ``SQLiteSession`` (a file, not its ``:memory:`` default) on one session of
  N items: what an agent with ``SessionSettings(limit=50)`` reads every turn.
- ``AalisSaver.aget_tuple`` of the newest checkpoint (memory-sqlite's metadata store)
  beside LangGraph's ``AsyncSqliteSaver`` on one thread of N checkpoints: what every graph
  invocation reads first; and ``aput`` per checkpoint, both sides, timed during the fill
  (the median of its last tenth: what a thread of N checkpoints pays for the next one),
  with and without the copy of the messages into the session's history (``messages=None``).

Targets (issue 25, docs/performance.md): at most 1.2x the built-in at every size, and flat
as the session or thread grows. Run ``.venv/bin/python benchmarks/agents_vs_builtins.py``
(``--quick`` for the smoke test's small sizes; ``--only savers`` or ``--only sessions``
for one adapter's part). Needs the integrations' test extras and
``langgraph-checkpoint-sqlite``.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    Report,
    interleaved,
    parse_args,
    print_table,
    ratio,
    run,
    scratch_dir,
    summarise,
)

NAME = "agents_vs_builtins"
TARGET = 1.2
#: Checkpoints per timed block of the put benchmark (see ``savers``).
BLOCK = 50


def _items(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"question {i}: what about the trip on day {i % 30}?"}
        if i % 2 == 0
        else {
            "type": "message",
            "id": f"msg_{i}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": f"answer {i}", "annotations": []}],
        }
        for i in range(n)
    ]


async def _host(data: Path) -> Any:
    from aalis_plugin_memory_sqlite import MemorySqlite

    from aalis_core import Host

    host = Host({"host": {"data_dir": str(data)}}, [MemorySqlite()], discover=False)
    await host.start()
    return host


async def sessions(report: Report, sizes: list[int], work: Path, rounds: int) -> list[list[Any]]:
    from aalis_openai_agents import AalisSession
    from agents import SQLiteSession

    rows: list[list[Any]] = []
    for n in sizes:
        data = _items(n)
        host = await _host(work / f"session-{n}")
        ours = AalisSession("s", host)
        theirs = SQLiteSession("s", db_path=work / f"sdk-{n}.db")
        for start in range(0, n, 1000):
            await ours.add_items(data[start : start + 1000])
            await theirs.add_items(data[start : start + 1000])
        assert await ours.get_items(50) == await theirs.get_items(50)
        timings = await interleaved(
            {
                "AalisSession": lambda ours=ours: ours.get_items(50),
                "SQLiteSession": lambda theirs=theirs: theirs.get_items(50),
            },
            rounds=rounds,
            calls_per_round=20,
        )
        theirs.close()
        await host.stop()
        a, b = timings["AalisSession"]["median_us"], timings["SQLiteSession"]["median_us"]
        r = ratio(a, b)
        report.row(case="get_items(limit=50)", items=n, aalis_us=a, builtin_us=b, ratio=r)
        report.ratio(f"get_items_{n}", r)
        report.target(
            f"AalisSession.get_items(50) at {n} items",
            f"<= {TARGET}x SQLiteSession",
            r,
            None if r is None else r <= TARGET,
        )
        rows.append([n, a, b, r])
    return rows


def _checkpoint(i: int, parent: str | None) -> tuple[dict[str, Any], str]:
    from langgraph.checkpoint.base import empty_checkpoint

    cp = empty_checkpoint()
    cp["id"] = str(uuid.uuid6()) if hasattr(uuid, "uuid6") else f"{i:020d}"
    cp["channel_values"] = {"messages": [f"message {i}"], "step": i}
    cp["channel_versions"] = {"messages": f"{i + 1:032}.0", "step": f"{i + 1:032}.0"}
    return cp, cp["id"]


async def savers(
    report: Report, sizes: list[int], work: Path, rounds: int
) -> tuple[list[list[Any]], list[list[Any]]]:
    from aalis_langgraph import AalisSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    rows: list[list[Any]] = []
    put_rows: list[list[Any]] = []
    clock = time.perf_counter_ns
    for n in sizes:
        host = await _host(work / f"saver-{n}")
        ours = AalisSaver(host)
        # The same saver copying inside every put (``history_delay=0``), and without the
        # copy (``messages=None``), each on a thread of its own: what the copy costs.
        inside = AalisSaver(host, history_delay=0)
        plain = AalisSaver(host, messages=None)
        # The fill is the put benchmark, in blocks of BLOCK checkpoints: each side puts the
        # same block in turn (the order rotates), and an Aalis side's block ends with
        # ``aflush()``, so the history copies its puts owe are inside its time (a copy left
        # running would be timed on the next side instead). A block's time / BLOCK is one
        # sample; the samples of the last tenth are what a thread of n checkpoints pays
        # per new checkpoint.
        sides: dict[str, tuple[Any, str]] = {
            "AalisSaver": (ours, "t"),
            "AsyncSqliteSaver": (None, "t"),
            "inside": (inside, "i"),
            "plain": (plain, "p"),
        }
        put_ns: dict[str, list[int]] = {name: [] for name in sides}
        async with AsyncSqliteSaver.from_conn_string(str(work / f"lg-{n}.db")) as theirs:
            sides["AsyncSqliteSaver"] = (theirs, "t")
            previous: str | None = None  # the newest checkpoint id of the block before
            for first in range(0, n, BLOCK):
                # Made a block at a time: a list of every checkpoint would keep n dicts alive
                # and make each garbage collection of the reads after the fill slower.
                block = [_checkpoint(i, None) for i in range(first, min(first + BLOCK, n))]
                order = list(sides)
                turn = (first // BLOCK) % len(order)
                for name in order[turn:] + order[:turn]:
                    saver, thread = sides[name]
                    parent = previous
                    start = clock()
                    for i, (cp, cid) in enumerate(block, start=first):
                        config: dict[str, Any] = {
                            "configurable": {"thread_id": thread, "checkpoint_ns": ""}
                        }
                        if parent:
                            config["configurable"]["checkpoint_id"] = parent
                        await saver.aput(config, cp, {"step": i}, dict(cp["channel_versions"]))
                        parent = cid
                    if isinstance(saver, AalisSaver):
                        await saver.aflush()
                    put_ns[name].append((clock() - start) // len(block))
                previous = block[-1][1]
            latest = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            a_tuple, b_tuple = await ours.aget_tuple(latest), await theirs.aget_tuple(latest)
            assert a_tuple is not None
            assert b_tuple is not None
            assert a_tuple.checkpoint["channel_values"] == b_tuple.checkpoint["channel_values"]
            timings = await interleaved(
                {
                    "AalisSaver": lambda ours=ours, latest=latest: ours.aget_tuple(latest),
                    "AsyncSqliteSaver": lambda theirs=theirs, latest=latest: theirs.aget_tuple(
                        latest
                    ),
                },
                rounds=rounds,
                calls_per_round=20,
            )
        await host.stop()
        a, b = timings["AalisSaver"]["median_us"], timings["AsyncSqliteSaver"]["median_us"]
        r = ratio(a, b)
        report.row(case="aget_tuple(latest)", checkpoints=n, aalis_us=a, builtin_us=b, ratio=r)
        report.ratio(f"get_tuple_{n}", r)
        report.target(
            f"AalisSaver.aget_tuple at {n} checkpoints",
            f"<= {TARGET}x AsyncSqliteSaver",
            r,
            None if r is None else r <= TARGET,
        )
        rows.append([n, a, b, r])
        tail = max(len(put_ns["AalisSaver"]) // 10, 1)
        median = {name: summarise(put_ns[name][-tail:])["median_us"] for name in put_ns}
        pb = median["AsyncSqliteSaver"]
        # (side, report case, ratio key): the default saver, the copy inside the put, none.
        cases = (
            ("AalisSaver", "aput (last tenth)", f"put_{n}"),
            ("inside", "aput, history_delay=0 (last tenth)", f"put_inside_{n}"),
            ("plain", "aput, messages=None (last tenth)", f"put_plain_{n}"),
        )
        put_ratio: dict[str, float | None] = {}
        for side, case, key in cases:
            put_ratio[side] = ratio(median[side], pb)
            report.row(
                case=case,
                checkpoints=n,
                aalis_us=median[side],
                builtin_us=pb,
                ratio=put_ratio[side],
            )
            report.ratio(key, put_ratio[side])
        pr = put_ratio["AalisSaver"]
        report.target(
            f"AalisSaver.aput with the history copy at {n} checkpoints",
            f"<= {TARGET}x AsyncSqliteSaver",
            pr,
            None if pr is None else pr <= TARGET,
        )
        sides_shown = ("AalisSaver", "inside", "plain")
        put_rows.append(
            [n, *(median[s] for s in sides_shown), pb, *(put_ratio[s] for s in sides_shown)]
        )
    return rows, put_rows


async def main(args: argparse.Namespace) -> None:
    session_sizes = [200, 1000] if args.quick else [10_000, 100_000]
    saver_sizes = [50, 200] if args.quick else [10_000, 100_000]
    rounds = 3 if args.quick else 15
    parts = [args.only] if args.only else ["sessions", "savers"]
    report = Report(
        NAME,
        args,
        {
            "session_sizes": session_sizes,
            "saver_sizes": saver_sizes,
            "rounds": rounds,
            "parts": parts,
        },
    )
    with scratch_dir("agents") as work:
        if "sessions" in parts:
            rows = await sessions(report, session_sizes, work, rounds)
            print_table(
                "get_items(limit=50), median us",
                ["items", "AalisSession", "SQLiteSession", "ratio"],
                rows,
            )
        if "savers" in parts:
            rows, put_rows = await savers(report, saver_sizes, work, rounds)
            print_table(
                "aget_tuple(latest), median us",
                ["checkpoints", "AalisSaver", "AsyncSqliteSaver", "ratio"],
                rows,
            )
            print_table(
                f"aput, median us per put over the last tenth of the fill (blocks of {BLOCK})",
                [
                    "checkpoints",
                    "AalisSaver",
                    "history_delay=0",
                    "messages=None",
                    "AsyncSqliteSaver",
                    "ratio",
                    "ratio delay=0",
                    "ratio None",
                ],
                put_rows,
            )
    report.note(
        "SQLiteSession and AsyncSqliteSaver on files in the same scratch directory as memory-sqlite"
    )
    report.finish()


def _args(argv: list[str]) -> argparse.Namespace:
    """The harness's options, plus ``--only sessions|savers`` (one adapter's part)."""
    only = argparse.ArgumentParser(add_help=False)
    only.add_argument("--only", choices=["sessions", "savers"], default=None)
    known, rest = only.parse_known_args(argv)
    args = parse_args(NAME, __doc__ or NAME, rest)
    args.only = known.only
    return args


if __name__ == "__main__":
    run(main, _args(sys.argv[1:]))
