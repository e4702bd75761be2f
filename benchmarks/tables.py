"""Print the JSON reports in benchmarks/results/ as the Markdown tables of docs/performance.md.

``.venv/bin/python benchmarks/tables.py [RESULTS_DIR]`` after a run, and paste: the page then
shows exactly what the reports hold, with no figure copied by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import RESULTS_DIR, fmt

NAMES = (
    "startup",
    "history_vs_peers",
    "save_vs_peers",
    "bulk_ops",
    "mongodb_vs_pymongo",
    "summary_quality",
    "compression_cost",
)


def md(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def x(value: Any) -> str:
    return "-" if value is None else f"{fmt(value)}x"


def machine(reports: dict[str, dict[str, Any]]) -> str:
    first = next(iter(reports.values()))["machine"]
    rows = [
        [
            name,
            r["started_at"],
            r["duration_s"],
            str(r["machine"].get("load_average_1_5_15")),
            str(r["machine"].get("load_average_at_end")),
        ]
        for name, r in reports.items()
    ]
    head = (
        f"{first['cpu']}, {first['cpu_count']} cores, {first['memory_gib']} GiB, {first['platform']}, "
        f"Python {first['python']}, SQLite {first['sqlite']}; "
        + ", ".join(f"{k} {v}" for k, v in first["versions"].items() if v)
    )
    return (
        head
        + "\n\n"
        + md(
            ["report", "started (UTC)", "seconds", "load at start (1/5/15 min)", "load at end"],
            rows,
        )
    )


def targets(reports: dict[str, dict[str, Any]]) -> str:
    rows = []
    for name, r in reports.items():
        for t in r["targets"]:
            verdict = {True: "met", False: "**missed**", None: "not measured"}[t["met"]]
            rows.append([name, t["name"], t["target"], fmt(t["value"]), verdict])
    return md(["benchmark", "target", "wanted", "measured", "verdict"], rows)


def history(r: dict[str, Any]) -> str:
    rows = []
    for row in r["results"]:
        rows.append(
            [
                f"{row['messages']:,}",
                row["memory_sqlite_median_us"],
                row["memory_sqlite_p95_us"],
                row["hand_written_median_us"],
                row["hand_written_to_thread_median_us"],
                row["langchain_median_us"] if row["langchain_median_us"] else "not measured",
                x(row["memory_sqlite_vs_hand_written"]),
                x(row["memory_sqlite_vs_hand_written_to_thread"]),
                x(row["langchain_vs_memory_sqlite"]),
                row["vm_steps_memory_sqlite"],
                row["vm_steps_hand_written"],
            ]
        )
    return md(
        [
            "messages",
            "memory-sqlite µs",
            "p95 µs",
            "hand-written µs",
            "hand+to_thread µs",
            "LangChain µs",
            "ours / hand",
            "ours / (hand+to_thread)",
            "LangChain / ours",
            "VM steps ours",
            "VM steps hand",
        ],
        rows,
    )


def save(r: dict[str, Any]) -> str:
    rows = [
        [
            row["contender"],
            row["median_us"],
            row["p95_us"],
            row["saves_per_s"],
            x(row["vs_hand_written"]),
        ]
        for row in r["results"]
    ]
    return md(["contender", "median µs", "p95 µs", "saves/s", "vs hand-written"], rows)


def bulk(r: dict[str, Any]) -> str:
    rows = [
        [
            row["backend"],
            row["operation"],
            row["median_ms"],
            row.get("hand_written_ms"),
            x(row.get("vs_hand_written")),
            row.get("vm_steps"),
            row.get("hand_written_vm_steps"),
        ]
        for row in r["results"]
    ]
    return md(
        [
            "backend",
            "operation",
            "ours ms",
            "hand-written ms",
            "ours / hand",
            "VM steps ours",
            "VM steps hand",
        ],
        rows,
    )


def mongodb(r: dict[str, Any]) -> str:
    server = r["server"] or {}
    rows = [
        [row["operation"], row["memory_mongodb_ms"], row["pymongo_ms"], x(row["vs_pymongo"])]
        for row in r["results"]
    ]
    head = f"Server: {server.get('kind')} {server.get('nx-27017') or ''} (reports version {server.get('reported_version')})."
    return (
        head + "\n\n" + md(["operation", "memory-mongodb ms", "pymongo ms", "ours / pymongo"], rows)
    )


def startup(r: dict[str, Any]) -> str:
    rows = [
        [row["measure"], row["median_ms"], row["target_ms"], x(row["vs_bare_python"])]
        for row in r["results"]
    ]
    heavy = r["parameters"].get("aalis_plugins_heaviest_imports_ms", {})
    text = md(["measure", "median ms", "target ms", "vs python -c pass"], rows)
    if heavy:
        text += "\n\nHeaviest top-level imports of one `aalis plugins` run (cumulative ms):\n\n"
        text += md(["module", "ms"], [[k, v] for k, v in heavy.items()])
    text += f"\n\nnumpy installed in the measured environment: {r['parameters'].get('numpy_installed')}."
    return text


def summary_quality(r: dict[str, Any]) -> str:
    contenders = [
        c for c in ("old", "new", "lexrank", "textrank") if f"{c}_share" in r["results"][0]
    ]
    rows = [
        [
            row["conversation"] + (" (held out)" if row.get("held_out") else ""),
            row["language"],
            row["replies"],
            row["messages"],
            row["compressions"],
            row["facts"],
            *(f"{len(row[f'{c}_retained'])}/{row['facts']}" for c in contenders),
            row["new_summary_chars"],
            ", ".join(row["new_missing"]) or "-",
        ]
        for row in r["results"]
    ]
    overall = r["ratios"]
    rows.append(
        [
            "**overall**",
            "",
            "",
            "",
            "",
            sum(row["facts"] for row in r["results"]),
            *(f"**{overall[f'{c}_share_overall']:.1%}**" for c in contenders),
            "",
            "",
        ]
    )
    return md(
        [
            "conversation",
            "lang",
            "replies",
            "messages",
            "compressions",
            "facts",
            *contenders,
            "new chars",
            "new misses",
        ],
        rows,
    )


def compression_cost(r: dict[str, Any]) -> str:
    rows = [
        [
            f"{row['messages']:,}",
            row["runs"],
            row["compress_wall_s"],
            row["wall_us_per_message"],
            row["cpu_us_per_message"],
            row["summariser_cpu_us_per_message"],
            row["rest_cpu_us_per_message"],
        ]
        for row in r["results"]
    ]
    return md(
        [
            "messages",
            "runs",
            "wall s (median)",
            "wall µs/msg",
            "CPU µs/msg",
            "summariser CPU µs/msg",
            "rest CPU µs/msg",
        ],
        rows,
    )


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS_DIR
    reports = {
        n: json.loads((folder / f"{n}.json").read_text())
        for n in NAMES
        if (folder / f"{n}.json").exists()
    }
    render = {
        "startup": startup,
        "history_vs_peers": history,
        "save_vs_peers": save,
        "bulk_ops": bulk,
        "mongodb_vs_pymongo": mongodb,
        "summary_quality": summary_quality,
        "compression_cost": compression_cost,
    }
    print("<!-- machine -->\n" + machine(reports) + "\n")
    print("<!-- targets -->\n" + targets(reports) + "\n")
    for name, report in reports.items():
        print(f"<!-- {name} -->\n" + render[name](report) + "\n")
        for note in report["notes"]:
            print(f"Note: {note}\n")


if __name__ == "__main__":
    main()
