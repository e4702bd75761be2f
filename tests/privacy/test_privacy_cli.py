"""Private by default through real ``aalis`` processes on the embedded default (memory-sqlite,
vectorstore-sqlite, the hash embedder): ``aalis vector search --session``, ``aalis vector
status`` and ``aalis forget`` (docs/host/privacy.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("aalis_plugin_memory_sqlite")
pytest.importorskip("aalis_plugin_vectorstore_sqlite")
pytest.importorskip("aalis_plugin_embedding_hash")
pytest.importorskip("aalis_plugin_memory_vector")

HASH_CONFIG = '[capabilities.embedding]\nprovider = "embedding-hash"\n'
T0 = 1_767_225_600_000
Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def aalis(tmp_path: Path) -> Run:
    exe = Path(sys.executable).with_name("aalis")
    assert exe.exists(), f"{exe} is missing; run ./scripts/setup"
    (tmp_path / "aalis.toml").write_text(HASH_CONFIG, encoding="utf-8")

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
        return subprocess.run(
            [str(exe), *args],
            cwd=tmp_path,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


def line(session: str, text: str, ts: int, who: tuple[str, str] | None, role: str = "user") -> str:
    message: dict[str, object] = {"role": role, "content": text, "timestamp": ts}
    if who is not None:
        message["metadata"] = {"platform": who[0], "user_id": who[1]}
    return json.dumps({"session_id": session, "archived": False, "message": message})


def load(tmp_path: Path, aalis: Run, *lines: str) -> None:
    header = json.dumps({"format": "aalis-memory-export", "version": 1, "scope": "all"})
    (tmp_path / "seed.jsonl").write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    run = aalis("import", "seed.jsonl")
    assert run.returncode == 0, run.stderr


def test_vector_search_from_a_session_sees_only_that_persons_private_sessions(
    tmp_path: Path, aalis: Run
) -> None:
    load(
        tmp_path,
        aalis,
        line("qq-42", "my bank PIN is 2580", T0, ("qq", "42")),
        line("tg-42", "hello from telegram", T0 + 1, ("telegram", "42")),
        line("tg-42-old", "my telegram PIN is 1111", T0 + 2, ("telegram", "42")),
        line("group", "morning all", T0 + 3, ("telegram", "7")),
        line("group", "lunch at noon", T0 + 4, ("telegram", "42")),
        line("fresh", "a brand new chat", T0 + 5, None),
    )
    fresh = aalis("vector", "search", "my bank PIN is 2580", "--session", "fresh", "-k", "10")
    assert fresh.returncode == 0, fresh.stderr
    assert "2580" not in fresh.stdout  # issue 1: a new session recalled everyone
    tg = aalis("vector", "search", "my bank PIN", "--session", "tg-42", "-k", "10")
    assert "2580" not in tg.stdout  # issue 2: another platform's "42"
    assert "lunch at noon" not in tg.stdout  # no group text in a private session
    assert "[tg-42-old] user: my telegram PIN is 1111" in tg.stdout
    group = aalis("vector", "search", "PIN", "--session", "group", "-k", "10")
    assert "PIN" not in group.stdout  # issue 3: the group's latest speaker's private chats
    every = aalis("vector", "search", "my bank PIN is 2580", "-k", "10")
    assert "[qq-42] user: my bank PIN is 2580" in every.stdout  # the operator sees all


def test_vector_status_lists_every_override_and_the_invalid_ones(
    tmp_path: Path, aalis: Run
) -> None:
    overrides = [
        {"namespace": "memory-vector.sessions", "key": key, "data": data}
        for key, data in (
            ("open", {"cross_session_mode": "all"}),
            ("typo", {"cross_sesion_mode": "all"}),
        )
    ]
    load(tmp_path, aalis, line("s1", "hi", T0, ("cli", "me")), *map(json.dumps, overrides))
    status = aalis("vector", "status")
    assert status.returncode == 0, status.stderr
    assert "cross_session_mode default: user" in status.stdout
    assert "session overrides: 2 (1 invalid)" in status.stdout
    assert "  session open: all" in status.stdout
    assert "  session typo: {'cross_sesion_mode': 'all'} (invalid: isolated)" in status.stdout
    mode = aalis("vector", "mode", "typo")
    assert "typo: isolated (from the session layer)" in mode.stdout


def test_forget_prints_a_row_per_layer_and_leaves_no_word(tmp_path: Path, aalis: Run) -> None:
    load(
        tmp_path,
        aalis,
        line("dm", "my bank PIN is 2580", T0, ("telegram", "ann")),
        line("dm", "noted, 2580", T0 + 1, None, role="assistant"),
        line("group", "bob says the budget is approved", T0 + 2, ("telegram", "bob")),
        line("group", "ann lives on Elm Street", T0 + 3, ("telegram", "ann")),
    )
    refused = aalis("forget", "--person", "telegram:ann")  # not a terminal, no --yes
    assert refused.returncode != 0
    assert "--yes" in refused.stderr
    bad = aalis("forget", "--person", "ann", "--yes")
    assert bad.returncode == 2
    assert "PLATFORM:USER_ID" in bad.stderr
    run = aalis("forget", "--person", "telegram:ann", "--yes")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = run.stdout.splitlines()
    assert any(
        r.startswith("ok     memory: 3 messages erased")
        and "private_sessions 1, group_sessions 1" in r
        for r in rows
    ), rows
    assert any(r.startswith("ok     memory-vector: 3 vectors erased") for r in rows), rows
    export = aalis("export", "--all", "-o", "after.jsonl")
    assert export.returncode == 0, export.stderr
    text = (tmp_path / "after.jsonl").read_text(encoding="utf-8")
    for word in ("2580", "Elm Street", '"ann"'):
        assert word not in text
    assert "bob says the budget is approved" in text
    search = aalis("vector", "search", "2580 Elm Street PIN", "-k", "10")
    assert "2580" not in search.stdout
    assert "Elm" not in search.stdout


def test_a_failed_layer_exits_1_and_what_it_left_is_never_recalled(
    tmp_path: Path, aalis: Run
) -> None:
    load(
        tmp_path,
        aalis,
        line("dm", "my bank PIN is 2580", T0, ("telegram", "ann")),
        line("other", "the weather is fine", T0 + 1, ("telegram", "bob")),
    )
    config = tmp_path / "aalis.toml"
    config.write_text(HASH_CONFIG + '[plugins]\ndisabled = ["vectorstore-sqlite"]\n', "utf-8")
    run = aalis("forget", "--person", "telegram:ann", "--yes")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "ok     memory: 1 message erased" in run.stdout
    assert "FAILED memory-vector: no vector store is active; vectors not erased" in run.stdout
    config.write_text(HASH_CONFIG, "utf-8")
    # The vector the failed row left is an orphan: check names it ...
    check = aalis("vector", "check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "orphan" in check.stdout
    # ... and no recall ever shows it (the hit is checked against the store, and deleted).
    assert "2580" not in aalis("vector", "search", "bank PIN 2580").stdout
    assert aalis("vector", "check", "--repair").returncode in (0, 1)
    assert aalis("vector", "check").returncode == 0
