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

from aalis_plugin_memory_vector._indexer import DELAY_ENV, SUBMIT_DELAY_ENV
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
    # more turns than the test waits for: the chat is killed mid-script, never stopped
    turns = "my locker code is 4417\n" + "".join(f"and the bike lock is {i}\n" for i in range(30))
    (data / "s.txt").write_text(turns, encoding="utf-8")
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
    said_before_the_kill = table["cli"]["messages"]
    assert said_before_the_kill >= 1
    assert table["cli"]["missing"] == table["cli"]["in gap"] == said_before_the_kill
    assert holes(check.stdout) == 0
    status = aalis("vector", "status")
    assert "index gaps waiting for backfill: 1" in status.stdout
    # any host start backfills (here: a search, whose host stops after the backfill)
    search = aalis("vector", "search", "locker code", "-k", "1")
    assert search.returncode == 0, search.stderr
    after = aalis("vector", "check")
    assert after.returncode == 0, after.stdout + after.stderr
    assert check_table(after.stdout)["cli"]["indexed"] == said_before_the_kill
    assert "my locker code is 4417" in aalis("vector", "search", "locker code").stdout
    print(f"kill -9 of a chat: {said_before_the_kill} messages in a gap, 0 holes, backfilled")


def test_kill_9_after_the_save_and_before_the_mark_is_backfilled_by_the_next_host(
    data: Path, aalis: Any
) -> None:
    """The instant no batch mark covers: the message is saved, its announcement is still
    on its way to the indexer. Only the process mark (liveness.py) names it."""
    (data / "s.txt").write_text("my gym locker is 5521\nsecond line\n", encoding="utf-8")
    chat = spawn(data, "chat", "--script", "s.txt", **{SUBMIT_DELAY_ENV: "60"})
    memory_db = data / ".aalis" / "aalis.db"
    try:
        wait_for(
            lambda: db_count(memory_db, "SELECT count(*) FROM messages WHERE role = 'user'") >= 1,
            60,
            "the chat to save its message",
        )
        time.sleep(0.3)  # the announcement is sleeping in the hook: nothing is marked
    finally:
        chat.send_signal(signal.SIGKILL)
        chat.wait(10)
    gaps = "SELECT count(*) FROM metadata WHERE namespace = 'memory-vector.gaps'"
    processes = "SELECT count(*) FROM metadata WHERE namespace = 'memory-vector.processes'"
    assert db_count(memory_db, gaps) == 0  # no batch mark: the window this test is about
    assert db_count(memory_db, processes) == 1  # the dead chat's process mark
    # Any later host finds the dead process (its pid is gone) and backfills its span.
    check = aalis("vector", "check")
    assert holes(check.stdout) == 0, check.stdout
    search = aalis("vector", "search", "gym locker", "-k", "1")
    assert search.returncode == 0, search.stderr
    after = aalis("vector", "check")
    assert after.returncode == 0, after.stdout + after.stderr
    assert "my gym locker is 5521" in aalis("vector", "search", "gym locker").stdout
    assert db_count(memory_db, processes) == 0  # adopted and removed; clean stops left none


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
    print(f"kill -9 of reindex --all: {lost} of {total} without a vector, all in gaps, backfilled")


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


#: A host process that takes part in a race: ``write`` saves a turn per round (which its
#: host indexes, the delay hook holding each batch between its mark and its embedding),
#: ``reindex`` re-embeds everything again and again, ``clear`` waits for a batch in flight
#: (a mark in the gaps namespace) and clears everything at a random instant of it; each
#: does ``rounds`` rounds, then prints what it did.
DRIVER = """
import asyncio, json, random, sys
from aalis_core._cli import open_host
from aalis_agent import run_clear
from aalis_api_memory import memory
from aalis_agent._saving import save_conversation
from aalis_schema_message import Message

role, rounds, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
WORDS = ["alpha", "bravo", "charlie", "delta", "echo"]

async def main():
    rng = random.Random(seed)
    done = 0
    async with open_host() as host:
        mem = host.capability(memory).use
        plugin = host.plugin("memory-vector")
        for r in range(rounds):
            if role == "write":
                turn = [
                    Message(role="user", content=f"secret {WORDS[i]} number {seed}-{r}-{i}")
                    for i in range(3)
                ]
                await save_conversation(mem, f"s{r % 3}", turn, host=host)
            elif role == "reindex":
                await plugin.reindex(None)
            elif role == "clear":
                for _ in range(200):  # at most 4 s for a batch in flight
                    if await mem.list_metadata("memory-vector.gaps"):
                        break
                    await asyncio.sleep(0.02)
                await asyncio.sleep(rng.uniform(0.0, 0.3))
                await run_clear(host, "all")
            done += 1
            if role == "write":
                await asyncio.sleep(0.35)
    print(json.dumps({"role": role, "rounds": done}))

asyncio.run(main())
"""


def driver(data: Path, role: str, rounds: int, seed: int, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, role, str(rounds), str(seed)],
        cwd=data,
        env=env(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], limit_s: float = 120) -> str:
    out, err = process.communicate(timeout=limit_s)
    assert process.returncode == 0, err[-2000:]
    return out


QUERIES = ("secret alpha", "secret bravo number", "charlie delta echo", "number")


def assert_nothing_erased_is_recalled(data: Path, *, cli: Any = None) -> dict[str, int]:
    """The index holds no orphan, no message is missing outside a gap, and no recall
    surface (``vector search``, the recall API, ``GET /api/recall``, MCP ``search_recall``)
    shows a text the store no longer holds. Returns the check's totals."""
    run = subprocess.run(
        [sys.executable, "-c", RECALL, *QUERIES],
        cwd=data,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    shown = json.loads(run.stdout)
    figures: dict[str, int] = shown["check"]
    assert (figures["orphaned"], figures["stale"], figures["holes"]) == (0, 0, 0), figures
    stored = stored_texts(data)
    for surface in ("search", "recall", "api", "mcp"):
        assert [text for text in shown[surface] if text not in stored] == [], surface
    if cli is not None:  # and the operator's commands themselves
        assert erased_shown(cli, QUERIES[:1], stored) == []
        check = cli("vector", "check")
        assert check_table(check.stdout)["TOTAL"]["orphaned"] == 0, check.stdout
        assert holes(check.stdout) == 0
    return figures


#: The Python recall API and ``GET /api/recall`` of aalis serve (through its in-process
#: test client), from every session's point of view.
RECALL = """
import asyncio, json, sys
from aalis_core._cli import open_host
from aalis_api_memory import memory
from aalis_api_vectorstore import recall

from aalis_plugin_memory_vector._indexer import BACKFILL_AT_START

async def main():
    out = {"recall": [], "api": [], "mcp": [], "search": []}
    queries = sys.argv[1:]
    BACKFILL_AT_START.set(False)
    async with open_host() as host:
        plugin = host.plugin("memory-vector")
        checked = await plugin.check(None)
        out["check"] = {
            "orphaned": sum(c.orphaned for c in checked),
            "stale": sum(c.stale for c in checked),
            "holes": sum(c.holes for c in checked),
            "indexed": sum(c.indexed for c in checked),
        }
        for query in queries:
            for hit in await plugin.recall.search(None, query, k=20):
                out["search"].append(hit.message.content)
        service = host.capability(recall).use
        sessions = [i.session_id for i in await host.capability(memory).use.list_sessions()]
        sessions = sessions or ["s0"]
        for sid in sessions:
            for query in queries:
                for hit in await service.recall(sid, query, k=20):
                    out["recall"].append(hit.message.content)
        if host.plugin("serve") is not None:
            from aalis_plugin_serve.testing import running
            async with running(host) as served, served.client() as client:
                for sid in sessions:
                    for query in queries:
                        r = await client.get("/api/recall", params={"session": sid, "q": query})
                        assert r.status_code == 200, r.text
                        out["api"].extend(h["message"]["content"] for h in r.json()["hits"])
        mcp = host.plugin("mcp")
        if mcp is not None:
            from mcp import Client
            async with Client(mcp.server()) as client:
                for sid in sessions:
                    for query in queries:
                        result = await client.call_tool(
                            "search_recall", {"session_id": sid, "query": query, "k": 20}
                        )
                        assert not result.is_error, result
                        hits = result.structured_content["hits"]
                        out["mcp"].extend(h["message"]["content"] for h in hits)
    print(json.dumps(out))

asyncio.run(main())
"""


@pytest.mark.parametrize("indexer_role", ["write", "reindex"])
def test_a_clear_in_another_process_is_never_undone_by_indexing(
    data: Path, aalis: Any, indexer_role: str
) -> None:
    # Both orders: the clearing process starts first, or the indexing one does; rounds of
    # each interleave at random. The delay hook holds every batch between its mark and its
    # embedding, which is where an upsert used to land after the clear.
    rounds = 12
    seed_data = _sessions(3, 10) if indexer_role == "reindex" else {}
    if seed_data:
        assert aalis("import", export_file(data, seed_data)).returncode == 0
    figures: list[dict[str, int]] = []
    for order in ("clear-first", "index-first"):
        if order == "index-first" and indexer_role == "reindex":
            # something for the reindex to re-embed while the clears run
            (data / "t.txt").write_text("secret echo number one\n", encoding="utf-8")
            assert aalis("chat", "--session", "s9", "--script", "t.txt").returncode == 0
        procs = []
        if order == "clear-first":
            procs.append(driver(data, "clear", rounds, 1))
        procs.append(driver(data, "write", rounds, 2, **{DELAY_ENV: "0.25"}))
        if indexer_role == "reindex":
            procs.append(driver(data, "reindex", rounds // 3, 3, **{DELAY_ENV: "0.1"}))
        if order == "index-first":
            time.sleep(1.0)
            procs.append(driver(data, "clear", rounds, 4))
        for process in procs:
            finish(process)
        figures.append(assert_nothing_erased_is_recalled(data))
    print(f"race {indexer_role}: 2 orders x {rounds} rounds, checks {figures}")
    if indexer_role != "write":
        return
    # and the plain CLI: a chat indexing while `aalis clear --all --yes` runs
    lines = "".join(f"secret delta number cli-{i}\n" for i in range(6))
    (data / "c.txt").write_text(lines, encoding="utf-8")
    chat = spawn(data, "chat", "--script", "c.txt", **{DELAY_ENV: "0.2"})
    time.sleep(0.5)
    clear = aalis("clear", "--all", "--yes")
    assert clear.returncode == 0, clear.stdout + clear.stderr
    chat.communicate(timeout=120)
    assert chat.returncode == 0
    assert_nothing_erased_is_recalled(data, cli=aalis)
