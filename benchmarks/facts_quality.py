"""Facts quality: share of facts whose current value is right, and share presented stale.

The set (``facts_quality_data.py``) is 14 conversations in English and Chinese, two of them
group chats, with facts that change, are corrected and repeated, and distractors. Each
conversation is saved message by message into memory-sqlite and announced with
``memory_messages_saved`` exactly as the chat does; the user-relation plugin derives the
facts off the hot path. Then, per expected ``(person, attribute, value)``:

* **current right**: the value is among the person's current facts of that attribute (for a
  single-valued attribute: it is the only current one);
* **stale**: a value the conversation replaced is still current (it would be presented).

The model path (``extractor = "llm"``) runs too, against a scripted OpenAI-compatible server
on loopback through the real llm-openai plugin. The script answers by running the offline
rules on each numbered line, so this measures the *plumbing* (one call per batch, the JSON
contract, labels, consolidation of a model's reading), not a model.

Beside the quality: what a turn pays for the fact layer (``memory_messages_saved`` handed
to the plugin: only a queue put) next to a save into SQLite, the offline extractor's cost
per message, and how many messages per second the deriver reads through the real store.

Run: ``.venv/bin/python benchmarks/facts_quality.py [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, parse_args, print_table, run, scratch_dir
from facts_quality_data import CONVERSATIONS

NAME = "facts_quality"
T0 = 1_700_000_000_000
CURRENT_TARGET = 0.90
STALE_TARGET = 0.02


def _host(
    db: Path, config: dict[str, Any] | None = None, model_url: str | None = None
) -> tuple[Any, Any]:
    from aalis_plugin_memory_sqlite import MemorySqlite
    from aalis_plugin_user_relation import UserRelation

    from aalis_core import Host

    plugin = UserRelation()
    plugins: list[Any] = [MemorySqlite(), plugin]
    tables: dict[str, Any] = {"memory-sqlite": {"path": str(db)}, "user-relation": config or {}}
    if model_url is not None:
        from aalis_plugin_openai import LlmOpenai

        plugins.insert(1, LlmOpenai())
        tables["llm-openai"] = {"base_url": model_url, "model": "scripted", "api_key": "x"}
    return Host({"plugins": tables}, plugins, discover=False), plugin


@contextlib.contextmanager
def scripted_model() -> Iterator[tuple[str, list[int]]]:
    """An OpenAI-compatible server that answers the extraction prompt by running the offline
    rules on each numbered line; yields its URL and the batch sizes it was asked."""
    from aalis_plugin_user_relation._extractor import extract

    batches: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            lines = body["messages"][-1]["content"].splitlines()
            batches.append(len(lines))
            facts = []
            for line in lines:
                index, _, text = line.partition("] ")
                for draft in extract(text):
                    facts.append(
                        {
                            "message": int(index.lstrip("[")),
                            "attribute": draft.attribute,
                            "value": draft.value,
                            "corrects": draft.corrects,
                        }
                    )
            content = json.dumps({"facts": facts}, ensure_ascii=False)
            payload = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": content}}]}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", batches
    finally:
        httpd.shutdown()
        httpd.server_close()


def _message(speaker: str, text: str, ts: int) -> Any:
    from aalis_schema_message import Message, new_message_id

    metadata = None if speaker == "assistant" else {"platform": "bench", "user_id": speaker}
    role = "assistant" if speaker == "assistant" else "user"
    return Message(id=new_message_id(), role=role, content=text, timestamp=ts, metadata=metadata)


async def quality(workdir: Path, model_url: str | None = None) -> dict[str, Any]:
    from aalis_api_memory import memory
    from aalis_api_relation import PersonRef, is_single_valued

    name = "offline" if model_url is None else "llm"
    config = None if model_url is None else {"extractor": "llm"}
    host, plugin = _host(workdir / f"quality-{name}.db", config, model_url)
    labels: set[str] = set()
    started = time.perf_counter()
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
        assert await deriver.settle(60.0)
        elapsed = time.perf_counter() - started
        for conversation in CONVERSATIONS:
            for speaker, expected in conversation["expect"].items():
                facts = await service.facts(PersonRef("bench", speaker))
                labels |= {f.extractor for f in facts}
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
    return {"checks": checks, "labels": sorted(labels), "seconds": elapsed}


async def cost(workdir: Path, messages: int) -> dict[str, Any]:
    """What a turn pays, and how fast the deriver reads."""
    from aalis_api_memory import memory
    from aalis_plugin_user_relation._extractor import extract

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
        with scripted_model() as (url, batches):
            by_model = await quality(workdir, url)
        figures = await cost(workdir, 100 if args.quick else 1000)
    messages = sum(len(c["turns"]) for c in CONVERSATIONS)
    model_checks = by_model["checks"]
    model_right = sum(c["right"] for c in model_checks) / len(model_checks)
    model_stale = sum(c["stale"] for c in model_checks) / len(model_checks)
    report.row(
        kind="model-plumbing",
        facts=len(model_checks),
        current_right=round(model_right, 3),
        stale=round(model_stale, 3),
        calls=len(batches),
        messages_per_call=round(statistics.mean(batches), 2) if batches else None,
        labels=by_model["labels"],
        seconds=round(by_model["seconds"], 3),
    )
    print_table(
        "model path (scripted loopback server: plumbing, not a model)",
        ["facts", "current right", "stale", "calls", "msgs/call", "labels"],
        [
            [
                len(model_checks),
                round(model_right, 3),
                round(model_stale, 3),
                len(batches),
                round(statistics.mean(batches), 2) if batches else "-",
                ",".join(by_model["labels"]),
            ]
        ],
    )
    report.target(
        "model path: fewer calls than messages",
        f"< {messages} calls",
        len(batches),
        len(batches) < messages,
    )
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
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
