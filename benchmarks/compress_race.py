"""Two ``aalis compress`` processes on one SQLite session at once, with a live writer.

Reproduces the concurrency failure of positional archiving and shows the exact commit
(docs/compression.md, "Exactness under concurrency"). Each run seeds a session, starts a
writer process that keeps appending, then two ``aalis compress SESSION`` processes at the same
moment. A run *fails* when the store afterwards holds more than one compression divider, or an
archived message newer than what the stored summary covers (``covered_to``): a message no
summary covers was archived.

Both commits are measured in the same run, interleaved: ``exact`` is the shipped code;
``positional`` is the commit a backend without ``archive_exact`` gets (the service is told the
backend lacks it), which is what every backend got before.

    .venv/bin/python benchmarks/compress_race.py [--quick] [--runs N] [--messages N]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, parse_args, print_table, run, scratch_dir

SID = "race"
T0 = 1_700_000_000_000

#: ``aalis`` with the backend's exact archiving hidden from memory-summary (``positional``).
POSITIONAL_CLI = (
    "import aalis_plugin_memory_summary._service as service\n"
    "service.has_exact_archiving = lambda memory: False\n"
    "from aalis_core._cli import cli\n"
    "cli(prog_name='aalis')\n"
)
EXACT_CLI = "from aalis_core._cli import cli\ncli(prog_name='aalis')\n"

WRITER = r"""
import asyncio, sys, time
from aalis_core import Host
from aalis_api_memory import memory
from aalis_schema_message import Message, now_ms

async def main():
    async with Host.from_config(sys.argv[1]) as host:
        store = host.capability(memory).use
        stop = time.monotonic() + float(sys.argv[2])
        i = 0
        while time.monotonic() < stop:
            role = "user" if i % 2 == 0 else "assistant"
            await store.save_message("race", Message(role=role, content=f"live {i}", timestamp=now_ms()))
            i += 1
            await asyncio.sleep(0.005)

asyncio.run(main())
"""


def _write_config(folder: Path) -> Path:
    config = folder / "aalis.toml"
    config.write_text(
        '[host]\ndata_dir = "data"\nlog_level = "warning"\n\n'
        '[capabilities.memory]\nprovider = "memory-sqlite"\n\n'
        '[plugins.memory-summary]\nsummariser = "extractive"\ntimeout = 600\n',
        encoding="utf-8",
    )
    return config


def _env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["AALIS_CONFIG"] = str(folder / "aalis.toml")
    env["AALIS_LOAD_PLUGINS"] = "memory-sqlite,memory-cli,memory-summary"
    return env


async def _seed(config: Path, messages: int) -> None:
    from aalis_api_memory import memory
    from aalis_schema_message import Message

    from aalis_core import Host

    async with Host.from_config(config) as host:
        store = host.capability(memory).use
        for i in range(messages):
            role = "user" if i % 2 == 0 else "assistant"
            text = f"{role} message {i}: the parcel number is {100000 + i}."
            await store.save_message(SID, Message(role=role, content=text, timestamp=T0 + i))


async def _verdict(config: Path) -> dict[str, Any]:
    from aalis_api_memory import compression, memory

    from aalis_core import Host

    async with Host.from_config(config) as host:
        store = host.capability(memory).use
        record = await host.capability(compression).use.summary(SID)
        stored = await store.export_session(SID)
    archived = [item.message for item in stored if item.archived]
    dividers = [item.message for item in stored if item.message.kind == "event-marker"]
    covered_to = record.covered_to if record is not None else None
    uncovered = [
        m
        for m in archived
        if m.kind != "event-marker"
        and (covered_to is None or (m.timestamp is not None and m.timestamp > covered_to))
    ]
    return {
        "dividers": len(dividers),
        "archived": len([m for m in archived if m.kind != "event-marker"]),
        "uncovered_archived": len(uncovered),
        "failed": len(dividers) != 1 or bool(uncovered),
    }


def _one_run(mode: str, messages: int, folder: Path) -> dict[str, Any]:
    config = _write_config(folder)
    asyncio.run(_seed(config, messages))
    env = _env(folder)
    code = EXACT_CLI if mode == "exact" else POSITIONAL_CLI
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(config), "600"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.0)  # the writer is writing
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, "compress", SID],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [proc.communicate(timeout=900) for proc in procs]
        elapsed = time.perf_counter() - started
    finally:
        writer.terminate()
        writer.wait(timeout=30)
    verdict = asyncio.run(_verdict(config))
    codes = [proc.returncode for proc in procs]
    errors = [err.strip().splitlines()[-1] if err.strip() else "" for _out, err in outputs]
    return {
        "mode": mode,
        "messages": messages,
        "exit_codes": codes,
        "errors": errors,
        "both_succeeded": codes == [0, 0],
        "seconds": round(elapsed, 2),
        **verdict,
    }


def main(args: Any) -> None:
    runs = args.runs if args.runs is not None else (1 if args.quick else 8)
    messages = args.messages if args.messages is not None else (400 if args.quick else 8000)
    report = Report("compress_race", args, {"runs": runs, "messages": messages})
    rows = []
    with scratch_dir("race") as scratch:
        for index in range(runs):
            for mode in ("positional", "exact"):
                folder = scratch / f"{mode}-{index}"
                folder.mkdir()
                row = _one_run(mode, messages, folder)
                report.row(run=index, **row)
                rows.append(row)
                print(
                    f"run {index} {mode:>10}: exit {row['exit_codes']} dividers "
                    f"{row['dividers']} uncovered archived {row['uncovered_archived']}",
                    flush=True,
                )
    table = []
    for mode in ("positional", "exact"):
        mine = [r for r in rows if r["mode"] == mode]
        failed = sum(1 for r in mine if r["failed"])
        both = sum(1 for r in mine if r["both_succeeded"])
        table.append([mode, len(mine), failed, both, max(r["uncovered_archived"] for r in mine)])
        report.ratio(f"{mode}_failure_share", failed / len(mine) if mine else None)
    print_table(
        "two compressions at once",
        ["commit", "runs", "failed runs", "both 'succeeded'", "max uncovered archived"],
        table,
    )
    exact_failed = sum(1 for r in rows if r["mode"] == "exact" and r["failed"])
    report.target("exact commit: failed runs", "0", exact_failed, exact_failed == 0)
    report.finish()


if __name__ == "__main__":
    import argparse

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--runs", type=int, default=None)
    extra.add_argument("--messages", type=int, default=None)
    known, rest = extra.parse_known_args()
    parsed = parse_args("compress_race", __doc__.splitlines()[0], rest)
    parsed.runs, parsed.messages = known.runs, known.messages
    run(main, parsed)
