"""The extractive summary does not depend on the interpreter's string-hash seed.

Units are iterated in set order, which changes with ``PYTHONHASHSEED``; summing their weights
in that order gave last-bit differences that broke ties differently, so the same long chat got
a different summary in another process. Each seed runs in its own interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"

SCRIPT = f"""
import sys
sys.path.insert(0, {str(BENCHMARKS)!r})
from compression_cost import chat
from aalis_plugin_memory_summary import _extractive as extractive
items = [(r.message.role, r.message.content) for r in chat(10000) if r.message.content]
previous = extractive.summarise(None, items)
print(extractive.summarise(previous, items[:5000]))
"""


@pytest.mark.skipif(not (BENCHMARKS / "compression_cost.py").exists(), reason="no data")
def test_the_same_chat_gets_the_same_summary_under_every_hash_seed() -> None:
    summaries = set()
    for seed in ("0", "3"):
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        summaries.add(done.stdout)
    assert len(summaries) == 1
