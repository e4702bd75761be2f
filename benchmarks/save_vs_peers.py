"""save_message: sequential awaited saves vs hand-written insert+commit, at equal durability.

Contenders, interleaved in one run, each committing every message on its own (an agent saves
a turn and must not lose it):

* **memory-sqlite** ``await store.save_message(sid, message)`` (validation, encoding, the worker
  thread hop, the message row and the session counters in one transaction);
* **hand-written sqlite3**: ``INSERT`` into the same schema's ``messages`` table of the same file
  plus ``COMMIT``, on a connection in WAL mode with ``synchronous=NORMAL`` — memory-sqlite's own
  settings, so both pay the same durability;
* **LangChain** ``SQLChatMessageHistory.add_message`` (SQLAlchemy ORM) on its own table, with
  the same two pragmas set on every connection. Without them it would run SQLite's defaults
  (rollback journal, ``synchronous=FULL``), which is slower and not the same guarantee.

Target (docs/performance.md): memory-sqlite at most 2x the hand-written insert+commit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _langchain
from _harness import Report, interleaved, parse_args, print_table, ratio, run, scratch_dir, sync

NAME = "save_vs_peers"
BASE_TS = 1_700_000_000_000
TEXT = "the assistant looked the parcel up, found it in transit and promised an update tomorrow"


class HandWritten:
    """Insert + commit per message, as a developer would write it with ``sqlite3``."""

    SQL = (
        "INSERT INTO messages (session_id, timestamp, archived, control, kind, role, platform, data)"
        " VALUES (?, ?, 0, 0, NULL, ?, NULL, ?)"
    )

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.i = 0

    def save(self) -> None:
        self.i += 1
        ts = BASE_TS + self.i
        data = json.dumps({"role": "user", "content": f"{self.i} {TEXT}", "timestamp": ts})
        self.conn.execute("BEGIN")
        self.conn.execute(self.SQL, ("hand", ts, "user", data))
        self.conn.execute("COMMIT")

    def synchronous(self) -> int:
        return int(self.conn.execute("PRAGMA synchronous").fetchone()[0])

    def close(self) -> None:
        self.conn.close()


async def main(args: argparse.Namespace) -> None:
    from aalis_plugin_memory_sqlite import SqliteMemory
    from aalis_schema_message import Message

    rounds, per_round = (3, 10) if args.quick else (60, 50)
    lc_ok, lc_reason = _langchain.available()
    report = Report(
        NAME, args, {"rounds": rounds, "saves_per_round": per_round, "langchain": lc_ok}
    )
    report.set_server({"kind": "sqlite3 (in process)", "version": sqlite3.sqlite_version})
    if not lc_ok:
        report.note(lc_reason)

    with scratch_dir("save") as workdir:
        store = SqliteMemory(workdir / "memory.db", synchronous="NORMAL")
        await store.open()
        hand = HandWritten(workdir / "memory.db")
        counter = 0

        async def ours() -> None:
            nonlocal counter
            counter += 1
            await store.save_message(
                "ours",
                Message(role="user", content=f"{counter} {TEXT}", timestamp=BASE_TS + counter),
            )

        contenders: dict[str, Any] = {
            "memory-sqlite": ours,
            "hand-written sqlite3": sync(hand.save),
        }
        if lc_ok:
            add = _langchain.adder(workdir / "langchain.db", "lc")
            lc_counter = 0

            def lc_save() -> None:
                nonlocal lc_counter
                lc_counter += 1
                add(f"{lc_counter} {TEXT}")

            contenders["LangChain add_message"] = sync(lc_save)

        async def hand_hop() -> None:
            await asyncio.to_thread(hand_thread.save)

        hand_thread = HandWritten(workdir / "memory.db")
        hand_thread.conn.close()
        hand_thread.conn = sqlite3.connect(
            workdir / "memory.db", isolation_level=None, check_same_thread=False
        )
        hand_thread.conn.execute("PRAGMA synchronous=NORMAL")
        contenders["hand-written sqlite3 + to_thread"] = hand_hop

        ours_sync = await store.run_on_connection(
            lambda c: int(c.execute("PRAGMA synchronous").fetchone()[0])
        )
        ours_journal = await store.run_on_connection(
            lambda c: str(c.execute("PRAGMA journal_mode").fetchone()[0])
        )
        assert ours_sync == hand.synchronous() == 1, "durability settings differ"
        stats = await interleaved(contenders, rounds=rounds, calls_per_round=per_round)
        saved = await store.count_history("ours")
        await store.close()
        hand.close()
        hand_thread.close()

    report.data["parameters"]["durability"] = {
        "journal_mode": ours_journal,
        "synchronous": "NORMAL",
    }
    floor = stats["hand-written sqlite3"]["median_us"]
    rows = []
    for name, st in stats.items():
        per_s = round(1e6 / st["median_us"]) if st["median_us"] else None
        report.row(
            contender=name, **st, saves_per_s=per_s, vs_hand_written=ratio(st["median_us"], floor)
        )
        rows.append([name, st["median_us"], st["p95_us"], per_s, ratio(st["median_us"], floor)])
    print_table(
        f"save_message, sequential awaited saves, WAL + synchronous=NORMAL ({saved:,} saved by memory-sqlite)",
        ["contender", "median µs", "p95 µs", "saves/s", "x hand-written"],
        rows,
    )
    ours_vs = ratio(stats["memory-sqlite"]["median_us"], floor)
    report.ratio("memory_sqlite_vs_hand_written", ours_vs)
    report.ratio(
        "memory_sqlite_vs_hand_written_to_thread",
        ratio(
            stats["memory-sqlite"]["median_us"],
            stats["hand-written sqlite3 + to_thread"]["median_us"],
        ),
    )
    if lc_ok:
        report.ratio(
            "langchain_vs_memory_sqlite",
            ratio(stats["LangChain add_message"]["median_us"], stats["memory-sqlite"]["median_us"]),
        )
    report.target(
        "save_message vs hand-written insert+commit",
        "<= 2x",
        ours_vs,
        None if ours_vs is None else ours_vs <= 2.0,
    )
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
