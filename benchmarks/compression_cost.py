"""Compression cost: time per compressed message at 1k, 10k and 100k messages (flat within 1.25x).

One session per size in a fresh SQLite file (memory-sqlite, the embedded default), filled with
a realistic chat through the store's bulk import: user lines (facts and small talk, English
and Chinese), the offline stand-in's replies, and a tool round (an assistant tool call and its
result) every 50 messages. Then one ``compress`` through the ``compression`` capability with
the offline default summariser, timed end to end (snapshot, split, summary, keep caps, the
pre-commit check, the commit), and the summariser alone on the same span, in the same run.

``--sizes`` overrides the sizes (``--sizes 1000,30000``); ``--quick`` uses small ones.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, parse_args, print_table, ratio, run, scratch_dir
from summary_quality_data import CONVERSATIONS

NAME = "compression_cost"
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (300, 1_000, 3_000)
FLAT = 1.25
BASE_TS = 1_700_000_000_000
TOOL_EVERY = 50
NOTICE = "[offline stand-in, not a language model; configure [plugins.llm-openai] for real replies]"


def chat(n: int) -> list[Any]:
    """``n`` messages of a long, ordinary chat (deterministic)."""
    from aalis_api_memory import StoredMessage
    from aalis_schema_message import Message, ToolCall

    lines = [line for c in CONVERSATIONS for line in c.lines]
    out: list[Any] = []
    i = 0
    while len(out) < n:
        ts = BASE_TS + len(out) * 10
        if len(out) % TOOL_EVERY == TOOL_EVERY - 2:
            call_id = f"call-{len(out)}"
            out.append(
                Message(
                    role="assistant",
                    content=None,
                    tool_calls=(ToolCall(id=call_id, name="calendar", arguments='{"day": 3}'),),
                    timestamp=ts,
                )
            )
            out.append(
                Message(
                    role="tool",
                    content='{"events": ["dentist 8:45", "call 11:00"]}',
                    tool_call_id=call_id,
                    name="calendar",
                    timestamp=ts + 1,
                )
            )
            continue
        line = lines[i % len(lines)]
        i += 1
        out.append(Message(role="user", content=line, timestamp=ts))
        out.append(
            Message(
                role="assistant",
                content=f'{NOTICE} You said: "{line}". I can see {len(out) + 1} messages of this'
                " conversation and a summary of earlier ones.",
                timestamp=ts + 1,
            )
        )
    return [StoredMessage(m, False) for m in out[:n]]


def repeats(size: int, quick: bool = False) -> int:
    """Runs per size: thirty, three for the largest sessions (each run compresses a new copy).

    A 1k compression takes about 50 ms, so with five runs one preempted or cold run moved the
    median by 20-40 % on this shared machine (1k alone ranged 47-68 µs/msg across runs of the
    same code); thirty make the small sizes as steady as the large ones, whose single runs
    last seconds. Every run does the same work; only the median's precision changes.
    """
    return 2 if quick else max(3, min(30, 300_000 // size))


async def measure(size: int, workdir: Path, quick: bool) -> dict[str, Any]:
    from aalis_api_memory import compression, memory
    from aalis_plugin_memory_sqlite import MemorySqlite
    from aalis_plugin_memory_summary import MemorySummary, _extractive as extractive

    from aalis_core import Host

    config = {
        "host": {"data_dir": str(workdir), "log_level": "warning"},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
        "plugins": {"memory-sqlite": {"path": str(workdir / "aalis.db")}},
    }
    records = chat(size)
    items = [(r.message.role, r.message.content) for r in records if r.message.content]
    walls: list[float] = []
    cpus: list[float] = []
    summariser_cpus: list[float] = []
    async with Host(config, [MemorySqlite(), MemorySummary()], discover=False) as host:
        store = host.capability(memory).use
        service = host.capability(compression).use
        # One-off costs (regex compilation, the worker threads) are paid before measuring.
        await store.import_messages("warm-up", chat(50))
        await service.compress("warm-up")
        for run_index in range(repeats(size, quick)):
            sid = f"s{run_index}"
            await store.import_messages(sid, records)
            start = time.process_time()
            extractive.summarise(None, items)
            summariser_cpus.append(time.process_time() - start)
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            outcome = await service.compress_detailed(sid)
            # CPU time of the whole process (the summariser's and the store's threads too):
            # what the compression costs, whatever else the shared machine is running.
            cpus.append(time.process_time() - start_cpu)
            walls.append(time.perf_counter() - start_wall)
            left = len(await store.get_history(sid, math.inf))
    wall, cpu, summariser_cpu = (statistics.median(v) for v in (walls, cpus, summariser_cpus))
    return {
        "messages": size,
        "runs": len(walls),
        "archived": outcome.archived,
        "active_after": left,
        "compress_wall_s": round(wall, 3),
        "compress_cpu_s": round(cpu, 3),
        "wall_us_per_message": round(wall / size * 1e6, 1),
        "cpu_us_per_message": round(cpu / size * 1e6, 1),
        "summariser_cpu_us_per_message": round(summariser_cpu / size * 1e6, 1),
        "rest_cpu_us_per_message": round((cpu - summariser_cpu) / size * 1e6, 1),
        "summary_chars": len(outcome.record.text) if outcome.record else 0,
    }


async def main(args: argparse.Namespace) -> None:
    from aalis_plugin_memory_summary import MemorySummaryConfig

    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    report = Report(
        NAME,
        args,
        {
            "sizes": list(sizes),
            "backend": "memory-sqlite",
            "summariser": "extractive (offline default)",
            "tool_round_every": TOOL_EVERY,
        },
    )
    rows = []
    with scratch_dir(NAME) as workdir:
        for size in sizes:
            place = workdir / str(size)
            place.mkdir()
            row = await measure(size, place, args.quick)
            report.row(**row)
            rows.append(
                [
                    row["messages"],
                    row["runs"],
                    row["compress_wall_s"],
                    row["wall_us_per_message"],
                    row["cpu_us_per_message"],
                    row["summariser_cpu_us_per_message"],
                    row["rest_cpu_us_per_message"],
                    row["summary_chars"],
                ]
            )
            print(f"{size:,} messages: {row['compress_wall_s']} s", flush=True)
    print_table(
        "compress (memory-sqlite, extractive), medians",
        [
            "messages",
            "runs",
            "wall s",
            "wall µs/msg",
            "CPU µs/msg",
            "summariser CPU µs/msg",
            "rest CPU µs/msg",
            "chars",
        ],
        rows,
    )
    results = report.data["results"]
    for clock in ("cpu", "wall"):
        per = [r[f"{clock}_us_per_message"] for r in results]
        # Growth is what "flat" guards against: no size may cost more per message than the
        # smallest one does, by more than FLAT. (The smallest pays the fixed cost of one
        # compression over the fewest messages, so max/min is reported beside it.)
        growth = ratio(max(per), per[0])
        report.ratio(f"{clock}_per_message_max_over_min", ratio(max(per), min(per)))
        report.ratio(f"{clock}_per_message_largest_over_smallest", ratio(per[-1], per[0]))
        report.ratio(f"{clock}_per_message_growth", growth)
        report.target(
            f"{clock} time per compressed message flat, {sizes[0]:,} to {sizes[-1]:,}"
            " (largest per-message cost over the smallest size's)",
            f"<= {FLAT}x",
            growth,
            growth is not None and growth <= FLAT,
        )
    timeout = MemorySummaryConfig().timeout
    largest = results[-1]
    report.target(
        f"compress of {largest['messages']:,} messages within the default timeout (wall)",
        f"<= {timeout:g} s",
        largest["compress_wall_s"],
        largest["compress_wall_s"] <= timeout,
    )
    if args.quick:
        report.note("--quick sizes: per-message figures are dominated by fixed costs")
    report.finish()


def cli(argv: list[str] | None = None) -> None:
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--sizes", default=None, help="comma-separated message counts")
    known, rest = extra.parse_known_args(argv)
    args = parse_args(NAME, __doc__.splitlines()[0] if __doc__ else NAME, rest)
    args.sizes = tuple(int(x) for x in known.sizes.split(",")) if known.sizes else None
    run(main, args)


if __name__ == "__main__":
    cli()
