"""Facts quality: share of facts whose current value is right, and share presented stale.

The set (``facts_quality_data.py``) is 14 conversations in English and Chinese, two of them
group chats, with facts that change, are corrected and repeated, and distractors. Each
conversation is saved message by message into memory-sqlite and announced with
``memory_messages_saved`` exactly as the chat does; the user-relation plugin derives the
facts off the hot path. Then, per expected ``(person, attribute, value)``:

* **current right**: the value is among the person's current facts of that attribute (for a
  single-valued attribute: it is the only current one);
* **stale**: a value the conversation replaced is still current (it would be presented).

Beside the quality: what a turn pays for the fact layer (``memory_messages_saved`` handed
to the plugin: only a queue put) next to a save into SQLite, the offline extractor's cost
per message, and how many messages per second the deriver reads through the real store.

Run: ``.venv/bin/python benchmarks/facts_quality.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, parse_args, print_table, run, scratch_dir
from facts_quality_data import CONVERSATIONS

NAME = "facts_quality"
T0 = 1_700_000_000_000
CURRENT_TARGET = 0.90
STALE_TARGET = 0.02


def _host(db: Path, config: dict[str, Any] | None = None) -> tuple[Any, Any]:
    from aalis_plugin_memory_sqlite.plugin import MemorySqlite
    from aalis_plugin_user_relation.plugin import UserRelation

    from aalis_core import Host

    plugin = UserRelation()
    host = Host(
        {"plugins": {"memory-sqlite": {"path": str(db)}, "user-relation": config or {}}},
        [MemorySqlite(), plugin],
        discover=False,
    )
    return host, plugin


def _message(speaker: str, text: str, ts: int) -> Any:
    from aalis_schema_message import Message, new_message_id

    metadata = None if speaker == "assistant" else {"platform": "bench", "user_id": speaker}
    role = "assistant" if speaker == "assistant" else "user"
    return Message(id=new_message_id(), role=role, content=text, timestamp=ts, metadata=metadata)


async def quality(workdir: Path) -> dict[str, Any]:
    from aalis_api_memory import memory
    from aalis_api_relation import PersonRef, is_single_valued

    host, plugin = _host(workdir / "quality.db")
    checks: list[dict[str, Any]] = []
    async with host:
        mem = host.capability(memory).use
        clock = T0
        for conversation in CONVERSATIONS:
            sid = conversation["id"]
            for speaker, text in conversation["turns"]:
                clock += 1000
                message = _message(speaker, text, clock)
                await mem.save_message(sid, message)
                await host.emit("memory_messages_saved", session_id=sid, messages=[message])
        deriver, service = plugin.active()
        assert await deriver.settle(30.0)
        for conversation in CONVERSATIONS:
            for speaker, expected in conversation["expect"].items():
                facts = await service.facts(PersonRef("bench", speaker))
                stale = conversation["stale"].get(speaker, {})
                for attribute, want in expected.items():
                    current = [f.value for f in facts if f.attribute == attribute]
                    wanted = want if isinstance(want, list) else [want]
                    right = all(w in current for w in wanted)
                    if is_single_valued(attribute):
                        right = right and len(current) == 1
                    presented_stale = any(v in current for v in stale.get(attribute, []))
                    checks.append(
                        {
                            "conversation": conversation["id"],
                            "lang": conversation["lang"],
                            "group": bool(conversation.get("group")),
                            "person": speaker,
                            "attribute": attribute,
                            "expected": wanted,
                            "current": current,
                            "right": right,
                            "stale": presented_stale,
                        }
                    )
    return {"checks": checks}


async def cost(workdir: Path, messages: int) -> dict[str, Any]:
    """What a turn pays, and how fast the deriver reads."""
    from aalis_api_memory import memory
    from aalis_plugin_user_relation.extractor import extract

    texts = [t for c in CONVERSATIONS for s, t in c["turns"] if s != "assistant"]
    host, plugin = _host(workdir / "cost.db", {"queue_size": messages + 10})
    async with host:
        mem = host.capability(memory).use
        deriver, _ = plugin.active()
        save_ns: list[int] = []
        hand_ns: list[int] = []
        batch = [_message(f"p{i % 7}", texts[i % len(texts)], T0 + i) for i in range(messages)]
        # The turn's own save, then what the fact layer costs it: the event handed over.
        started_all = time.perf_counter()
        for i, message in enumerate(batch):
            start = time.perf_counter_ns()
            await mem.save_message(f"s{i % 10}", message)
            save_ns.append(time.perf_counter_ns() - start)
            start = time.perf_counter_ns()
            await deriver.submit(f"s{i % 10}", [message])
            hand_ns.append(time.perf_counter_ns() - start)
        start = time.perf_counter()
        assert await deriver.settle(120.0)
        drained_s = time.perf_counter() - start
        total_s = time.perf_counter() - started_all
    extract_ns: list[int] = []
    for text in texts * 20:
        start = time.perf_counter_ns()
        extract(text)
        extract_ns.append(time.perf_counter_ns() - start)
    save_us = statistics.median(save_ns) / 1000
    hand_us = statistics.median(hand_ns) / 1000
    return {
        "messages": messages,
        "save_us_median": round(save_us, 1),
        "handover_us_median": round(hand_us, 1),
        "turn_overhead_share": round(hand_us / save_us, 4),
        "extract_us_median": round(statistics.median(extract_ns) / 1000, 1),
        "derived_messages_per_s": round(messages / total_s, 1),
        "drain_after_last_save_s": round(drained_s, 3),
    }


async def main(args: argparse.Namespace) -> None:
    report = Report(
        NAME,
        args,
        {
            "conversations": len(CONVERSATIONS),
            "english": sum(c["lang"] == "en" for c in CONVERSATIONS),
            "chinese": sum(c["lang"] == "zh" for c in CONVERSATIONS),
            "groups": sum(bool(c.get("group")) for c in CONVERSATIONS),
            "extractor": "offline",
            "store": "memory-sqlite",
        },
    )
    with scratch_dir("facts-quality") as workdir:
        found = await quality(workdir)
        figures = await cost(workdir, 100 if args.quick else 1000)
    checks = found["checks"]
    rows = []
    for subset, chosen in (
        ("english", [c for c in checks if c["lang"] == "en"]),
        ("chinese", [c for c in checks if c["lang"] == "zh"]),
        ("groups", [c for c in checks if c["group"]]),
        ("all", checks),
    ):
        right = sum(c["right"] for c in chosen) / len(chosen)
        stale = sum(c["stale"] for c in chosen) / len(chosen)
        report.row(
            kind="quality",
            set=subset,
            facts=len(chosen),
            current_right=round(right, 3),
            stale=round(stale, 3),
        )
        rows.append([subset, len(chosen), round(right, 3), round(stale, 3)])
    print_table(
        "facts quality (offline extractor)", ["set", "facts", "current right", "stale"], rows
    )
    for check in checks:
        if not check["right"] or check["stale"]:
            report.note(
                f"{check['conversation']}/{check['person']}/{check['attribute']}: expected "
                f"{check['expected']}, current {check['current']}"
            )
    report.row(kind="cost", **figures)
    print_table(
        "what the fact layer costs",
        ["save µs", "handover µs", "share", "extract µs", "derived msg/s"],
        [
            [
                figures["save_us_median"],
                figures["handover_us_median"],
                figures["turn_overhead_share"],
                figures["extract_us_median"],
                figures["derived_messages_per_s"],
            ]
        ],
    )
    total_right = sum(c["right"] for c in checks) / len(checks)
    total_stale = sum(c["stale"] for c in checks) / len(checks)
    report.target(
        "current value right, offline",
        f">= {CURRENT_TARGET}",
        round(total_right, 3),
        total_right >= CURRENT_TARGET,
    )
    report.target(
        "presented stale, offline",
        f"<= {STALE_TARGET}",
        round(total_stale, 3),
        total_stale <= STALE_TARGET,
    )
    report.target(
        "turn slower by the fact layer",
        "<= 0.05",
        figures["turn_overhead_share"],
        figures["turn_overhead_share"] <= 0.05,
    )
    report.target(
        "deriver keeps up",
        ">= 50 messages/s",
        figures["derived_messages_per_s"],
        figures["derived_messages_per_s"] >= 50,
    )
    report.note("model extractor (llm capability, one call per batch): not built yet, not measured")
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
