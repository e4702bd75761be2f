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


async def measure(size: int, workdir: Path) -> dict[str, Any]:
    from aalis_api_memory import compression, memory
    from aalis_plugin_memory_sqlite.plugin import MemorySqlite
    from aalis_plugin_memory_summary import MemorySummary, extractive

    from aalis_core import Host

    config = {
        "host": {"data_dir": str(workdir), "log_level": "warning"},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
        "plugins": {"memory-sqlite": {"path": str(workdir / "aalis.db")}},
    }
    records = chat(size)
    async with Host(config, [MemorySqlite(), MemorySummary()], discover=False) as host:
        store = host.capability(memory).use
        service = host.capability(compression).use
        await store.import_messages("s", records)
        items = [(r.message.role, r.message.content) for r in records if r.message.content]
        start = time.perf_counter()
        extractive.summarise(None, items)
        summariser_s = time.perf_counter() - start
        start = time.perf_counter()
        outcome = await service.compress_detailed("s")
        total_s = time.perf_counter() - start
        left = len(await store.get_history("s", math.inf))
    return {
        "messages": size,
        "archived": outcome.archived,
        "active_after": left,
        "compress_s": round(total_s, 3),
        "compress_us_per_message": round(total_s / size * 1e6, 1),
        "summariser_s": round(summariser_s, 3),
        "summariser_us_per_message": round(summariser_s / size * 1e6, 1),
        "rest_us_per_message": round((total_s - summariser_s) / size * 1e6, 1),
        "summary_chars": len(outcome.record.text) if outcome.record else 0,
    }


async def main(args: argparse.Namespace) -> None:
    from aalis_plugin_memory_summary.config import MemorySummaryConfig

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
            row = await measure(size, place)
            report.row(**row)
            rows.append(
                [
                    row["messages"],
                    row["archived"],
                    row["compress_s"],
                    row["compress_us_per_message"],
                    row["summariser_us_per_message"],
                    row["rest_us_per_message"],
                    row["summary_chars"],
                ]
            )
            print(f"{size:,} messages: {row['compress_s']} s", flush=True)
    print_table(
        "compress (memory-sqlite, extractive)",
        [
            "messages",
            "archived",
            "compress s",
            "µs/msg",
            "summariser µs/msg",
            "rest µs/msg",
            "chars",
        ],
        rows,
    )
    results = report.data["results"]
    per = [r["compress_us_per_message"] for r in results]
    spread = ratio(max(per), min(per)) if per else None
    report.ratio("per_message_max_over_min", spread)
    if len(results) >= 2:
        report.ratio(
            "per_message_largest_over_smallest",
            ratio(results[-1]["compress_us_per_message"], results[0]["compress_us_per_message"]),
        )
    report.target(
        f"time per compressed message flat from {sizes[0]:,} to {sizes[-1]:,} (max/min)",
        f"<= {FLAT}x",
        spread,
        spread is not None and spread <= FLAT,
    )
    timeout = MemorySummaryConfig().timeout
    largest = results[-1]
    report.target(
        f"compress of {largest['messages']:,} messages within the default timeout",
        f"<= {timeout:g} s",
        largest["compress_s"],
        largest["compress_s"] <= timeout,
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
