"""The recall index against real ``aalis`` processes sharing one SQLite data directory:
shared timestamps, kill -9 of a writer, an interrupted reindex, and clears racing indexing
in another process (docs/recall.md, "Identity and the recall check" and "Gaps").

The hash embedder is pinned, so no model is needed. A test hook
(``AALIS_MEMORY_VECTOR_TEST_EMBED_DELAY_S``) makes the indexer sleep after marking a batch
and before embedding it, which is the instant a kill or a clear in another process hurts.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aalis_plugin_vectorstore_sqlite")
pytest.importorskip("aalis_plugin_embedding_hash")

from aalis_plugin_memory_vector.indexer import DELAY_ENV
from aalis_schema_message import new_message_id

CONFIG = '[capabilities.embedding]\nprovider = "embedding-hash"\n'
T0 = 1_700_000_000_000
EXE = Path(sys.executable).with_name("aalis")


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
    base.update(extra)
    return base


def spawn(tmp_path: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(EXE), *args],
        cwd=tmp_path,
        env=env(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def export_file(tmp_path: Path, sessions: dict[str, list[dict[str, Any]]]) -> str:
    lines = [json.dumps({"format": "aalis-memory-export", "version": 1})]
    for sid, messages in sessions.items():
        for message in messages:
            lines.append(json.dumps({"session_id": sid, "archived": False, "message": message}))
    (tmp_path / "import.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "import.jsonl"


def said(text: str, ts: int, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": text, "timestamp": ts, "id": new_message_id()}


def wait_for(condition: Callable[[], bool], limit_s: float, what: str) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def db_count(path: Path, sql: str) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def vector_db(tmp_path: Path) -> Path:
    found = [p for p in (tmp_path / ".aalis").glob("*.db") if "vector" in p.name]
    assert found, list((tmp_path / ".aalis").iterdir())
    return found[0]


def check_table(stdout: str) -> dict[str, dict[str, int]]:
    """``aalis vector check``'s table as {session: {column: value}} (TOTAL included)."""
    lines = stdout.splitlines()
    header = re.split(r"\s{2,}", lines[0].strip())
    rows: dict[str, dict[str, int]] = {}
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(header):
            break
        rows[cells[0]] = {h: int(c) for h, c in zip(header[1:], cells[1:], strict=True)}
    return rows


def holes(stdout: str) -> int:
    found = re.search(r"missing and not in a recorded gap: (\d+)", stdout)
    assert found, stdout
    return int(found.group(1))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "aalis.toml").write_text(CONFIG, encoding="utf-8")
    return tmp_path


def test_two_messages_of_one_millisecond_are_both_found_with_their_own_text(
    data: Path, aalis: Any
) -> None:
    name = export_file(
        data,
        {
            "group": [
                said("Bob: my bank PIN hint is the dog's name", T0),
                said("Carol: I am vegan", T0),
                said("Dave: see you on Friday", T0 + 5),
            ]
        },
    )
    run = aalis("import", name)
    assert run.returncode == 0, run.stderr
    vegan = aalis("vector", "search", "vegan", "-k", "1")
    assert vegan.returncode == 0, vegan.stderr
    assert "[group] user: Carol: I am vegan" in vegan.stdout.splitlines()[0]
    pin = aalis("vector", "search", "bank PIN hint dog's name", "-k", "1")
    assert "[group] user: Bob: my bank PIN hint is the dog's name" in pin.stdout.splitlines()[0]
    # the neighbours of Carol are Bob (before) and Dave (after), never Carol herself
    assert [line.strip() for line in vegan.stdout.splitlines()[1:]] == [
        "user: Bob: my bank PIN hint is the dog's name",
        "user: Dave: see you on Friday",
    ]
    check = aalis("vector", "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check_table(check.stdout)["group"]["indexed"] == 3


def test_kill_9_between_save_and_indexing_is_backfilled_by_the_next_host(
    data: Path, aalis: Any
) -> None:
    (data / "s.txt").write_text("my locker code is 4417\n/recall locker\n", encoding="utf-8")
    chat = spawn(data, "chat", "--script", "s.txt", **{DELAY_ENV: "60"})
    try:
        memory_db = data / ".aalis" / "aalis.db"
        wait_for(
            lambda: db_count(memory_db, "SELECT count(*) FROM messages WHERE role = 'user'") >= 1,
            60,
            "the chat to save its message",
        )
        # the worker marks the batch, then sleeps (the hook) before embedding
        wait_for(
            lambda: (
                db_count(
                    memory_db,
                    "SELECT count(*) FROM metadata WHERE namespace = 'memory-vector.gaps'",
                )
                >= 1
            ),
            30,
            "the batch to be marked",
        )
    finally:
        chat.send_signal(signal.SIGKILL)
        chat.wait(10)
    check = aalis("vector", "check")
    assert check.returncode == 1, check.stdout + check.stderr
    table = check_table(check.stdout)
    assert (table["cli"]["missing"], table["cli"]["in gap"]) == (1, 1)
    assert holes(check.stdout) == 0
    status = aalis("vector", "status")
    assert "index gaps waiting for backfill: 1" in status.stdout
    # any host start backfills (here: a search, whose host stops after the backfill)
    search = aalis("vector", "search", "locker code", "-k", "1")
    assert search.returncode == 0, search.stderr
    after = aalis("vector", "check")
    assert after.returncode == 0, after.stdout + after.stderr
    assert check_table(after.stdout)["cli"]["indexed"] == 1
    assert "my locker code is 4417" in aalis("vector", "search", "locker code").stdout


def _sessions(count: int, per: int) -> dict[str, list[dict[str, Any]]]:
    return {
        f"s{s:02d}": [
            said(f"fact {s}-{i}: the {('red', 'blue', 'green')[i % 3]} box {i}", T0 + i)
            for i in range(per)
        ]
        for s in range(count)
    }


def test_kill_9_during_reindex_all_leaves_gaps_that_the_next_host_backfills(
    data: Path, aalis: Any
) -> None:
    total = 12 * 25
    assert aalis("import", export_file(data, _sessions(12, 25))).returncode == 0
    vectors = vector_db(data)
    assert db_count(vectors, "SELECT count(*) FROM vectors") == total
    reindex = spawn(data, "vector", "reindex", "--all", **{DELAY_ENV: "0.3"})
    try:
        wait_for(
            lambda: db_count(vectors, "SELECT count(*) FROM vectors") < total,
            60,
            "the reindex to drop a few sessions' vectors",
        )
    finally:
        reindex.send_signal(signal.SIGKILL)
        reindex.wait(10)
    lost = total - db_count(vectors, "SELECT count(*) FROM vectors")
    assert lost > 0
    check = aalis("vector", "check")
    assert check.returncode == 1, check.stdout + check.stderr
    table = check_table(check.stdout)
    assert table["TOTAL"]["missing"] == lost
    assert table["TOTAL"]["in gap"] == lost
    assert holes(check.stdout) == 0
    status = aalis("vector", "status")
    gaps = int(re.search(r"index gaps waiting for backfill: (\d+)", status.stdout).group(1))  # type: ignore[union-attr]
    assert gaps >= 1
    assert aalis("vector", "search", "red box").returncode == 0  # a host start backfills
    after = aalis("vector", "check")
    assert after.returncode == 0, after.stdout + after.stderr
    assert check_table(after.stdout)["TOTAL"]["indexed"] == total
    assert (
        db_count(
            data / ".aalis" / "aalis.db",
            "SELECT count(*) FROM metadata WHERE namespace = 'memory-vector.gaps'",
        )
        == 0
    )


def erased_shown(aalis: Any, queries: Iterable[str], stored: set[str]) -> list[str]:
    """Texts a recall surface shows that the store no longer holds."""
    shown: list[str] = []
    for query in queries:
        run = aalis("vector", "search", query, "-k", "20")
        assert run.returncode == 0, run.stderr
        for line in run.stdout.splitlines():
            found = re.match(r"^\S+\s+\[\S+\] \w+: (.*)$", line)
            if found and found.group(1) not in stored:
                shown.append(found.group(1))
    return shown


def stored_texts(data: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{data / '.aalis' / 'aalis.db'}?mode=ro", uri=True)
    try:
        texts: set[str] = set()
        for (raw,) in conn.execute("SELECT data FROM messages"):
            content = json.loads(raw).get("content")
            if isinstance(content, str):
                texts.add(content)
        return texts
    finally:
        conn.close()
