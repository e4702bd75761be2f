"""Summary length against span length: the data behind memory-summary's summary check.

A model's summary that is far too short for what it replaces ("OK." over 40 messages) must not
be committed (docs/compression.md, "A model's summary is checked"). Where "far too short" lies
is measured here, on the conversations of ``summary_quality_data.py`` (the same ones
``summary_quality.py`` scores), compressed every 20 messages as that benchmark does, each
summary cumulative:

- ``carried``: the tokens a summary has to carry: the previous summary plus the span's texts
  (the token estimate of ``aalis_agent._tokens``);
- ``extractive``: the offline summariser's summary of that span (what the fallback commits);
- ``facts``: the tersest summary a model could honestly write: every planted fact stated so
  far, as the bare matched text (``"Ana Ribeiro; Berlin; 14 March; ..."``), no words around
  them. No model is reachable from this machine, so this stands for the shortest reasonable
  model summary: a real one adds words around the facts and is longer.

The report gives the ratio summary/carried per compression, and its minimum and 5th
percentile per kind; the check's floor has to sit well below both.

Run: ``.venv/bin/python benchmarks/summary_length.py [--quick]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, parse_args, print_table, run
from summary_quality import COMPRESS_EVERY, messages_of, replies_for
from summary_quality_data import CONVERSATIONS, HELD_OUT, QUICK

NAME = "summary_length"


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def main(args: argparse.Namespace) -> None:
    from aalis_agent import estimate_text_tokens
    from aalis_plugin_memory_summary import _extractive as extractive
    from aalis_plugin_memory_summary._check import summary_floor

    conversations = [c for c in (*CONVERSATIONS, *HELD_OUT) if not args.quick or c.name in QUICK]
    report = Report(
        NAME,
        args,
        {"conversations": len(conversations), "compress_every_messages": COMPRESS_EVERY},
    )
    ratios: dict[str, list[float]] = {"extractive": [], "facts": []}
    below: dict[str, int] = {"extractive": 0, "facts": 0}
    rows: list[list[Any]] = []
    steps = 0
    for conversation in conversations:
        messages = messages_of(conversation, await replies_for(conversation))
        previous: str | None = None
        facts_text = ""
        for start in range(0, len(messages), COMPRESS_EVERY):
            span = messages[start : start + COMPRESS_EVERY]
            items = [(m.role, m.content or "") for m in span]
            carried = estimate_text_tokens(previous or "") + sum(
                estimate_text_tokens(text) for _, text in items
            )
            summary = extractive.summarise(previous, items)
            seen = "\n".join(m.content or "" for m in messages[: start + len(span)])
            found = []
            for fact in conversation.facts:
                match = re.search(fact.pattern, seen, re.IGNORECASE)
                if match:
                    found.append(match.group(0))
            facts_text = "; ".join(found)
            floor = summary_floor(carried)
            figures = {
                "extractive": estimate_text_tokens(summary),
                "facts": estimate_text_tokens(facts_text),
            }
            for kind, tokens in figures.items():
                if carried and facts_text:
                    ratios[kind].append(tokens / carried)
                if tokens < floor and (kind == "extractive" or facts_text):
                    below[kind] += 1
            steps += 1
            report.row(
                conversation=conversation.name,
                language=conversation.language,
                replies=conversation.replies,
                step=start // COMPRESS_EVERY + 1,
                carried_tokens=carried,
                extractive_tokens=figures["extractive"],
                facts_tokens=figures["facts"],
                floor_tokens=floor,
            )
            rows.append(
                [
                    conversation.name,
                    start // COMPRESS_EVERY + 1,
                    carried,
                    figures["extractive"],
                    figures["facts"],
                    floor,
                ]
            )
            previous = summary
    print_table(
        "tokens a summary carries, and what summaries of it hold",
        ["conversation", "step", "carried", "extractive", "facts only", "floor"],
        rows,
    )
    for kind, values in ratios.items():
        report.ratio(f"{kind}_ratio_min", round(min(values), 4))
        report.ratio(f"{kind}_ratio_p05", round(_percentile(values, 0.05), 4))
        report.ratio(f"{kind}_ratio_median", round(statistics.median(values), 4))
        report.ratio(f"{kind}_below_floor", below[kind])
    report.target(
        "no summary of the data falls below the floor (extractive and facts-only)",
        "0 of each",
        below["extractive"] + below["facts"],
        below["extractive"] + below["facts"] == 0,
    )
    report.note(f"{steps} compressions measured")
    report.note("'facts' stands for the tersest honest model summary: no model is reachable here")
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0] if __doc__ else NAME))
