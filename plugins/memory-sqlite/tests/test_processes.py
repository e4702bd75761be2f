"""Several processes and kill -9: nothing acknowledged is lost, the file is never damaged.

Children are small scripts written into ``tmp_path`` and run with this interpreter; each
prints a line only after the write it names was acknowledged (the awaited call returned),
and flushes, so every line the test reads is a promise the file must keep.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aalis_plugin_memory_sqlite import SqliteMemory

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")

WRITER = r"""
import asyncio, sys
from aalis_api_memory import Put
from aalis_plugin_memory_sqlite import SqliteMemory
from aalis_schema_message import Message

async def main(path, synchronous):
    async with SqliteMemory(path, synchronous=synchronous) as store:
        i = 0
        while True:
            await store.save_message("s", Message(role="user", content=f"m{i}", timestamp=1000 + i))
            print(f"msg {i}", flush=True)
            if i % 5 == 0:
                await store.commit_metadata([Put("ns", f"k{i}", {"i": i}), Put("ns", "last", {"i": i})])
                print(f"meta {i}", flush=True)
            if i % 25 == 0:
                # A big transaction, so the kill has a fair chance to land inside one.
                await store.commit_metadata([Put(f"batch{i}", f"k{j}", {"j": j}) for j in range(200)])
                print(f"batch {i}", flush=True)
            i += 1

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@pytest.mark.parametrize("synchronous", ["NORMAL", "FULL"])
@pytest.mark.timeout(120)
def test_kill_9_loses_no_acknowledged_write(tmp_path: Path, synchronous: str) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    path = tmp_path / "crash.db"
    child = subprocess.Popen(
        [sys.executable, str(script), str(path), synchronous],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acknowledged: list[str] = []
    deadline = time.monotonic() + 60
    try:
        assert child.stdout is not None
        for line in child.stdout:
            acknowledged.append(line.strip())
            if len(acknowledged) >= 400 or time.monotonic() > deadline:
                break
    finally:
        os.kill(child.pid, signal.SIGKILL)
    # Read the rest through the same buffered file the loop used: communicate() reads the raw
    # pipe and would miss lines the iterator had already buffered but not yet yielded, so
    # acknowledged writes would look unacknowledged.
    assert child.stdout is not None
    assert child.stderr is not None
    rest = child.stdout.read()
    errors = child.stderr.read()
    child.wait(timeout=30)
    acknowledged.extend(line.strip() for line in rest.splitlines() if line.strip())
    assert child.returncode == -signal.SIGKILL, errors
    messages = [int(line.split()[1]) for line in acknowledged if line.startswith("msg ")]
    metas = [int(line.split()[1]) for line in acknowledged if line.startswith("meta ")]
    batches = [int(line.split()[1]) for line in acknowledged if line.startswith("batch ")]
    assert len(messages) >= 50, (
        f"the writer acknowledged too little to test: {acknowledged[-3:]} {errors}"
    )

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    asyncio.run(_check_after_kill(path, messages, metas, batches))


async def _check_after_kill(
    path: Path, messages: list[int], metas: list[int], batches: list[int]
) -> None:
    async with SqliteMemory(path) as store:
        stored = [m.content for m in await store.get_full_history("s", float("inf"))]
        assert stored[: len(messages)] == [f"m{i}" for i in messages]
        assert len(stored) <= len(messages) + 1  # at most the write that was in flight
        keys = set(await store.list_metadata_keys("ns"))
        assert {f"k{i}" for i in metas} <= keys
        last = await store.get_metadata("ns", "last")
        assert last is not None
        assert last["i"] >= max(metas)
        for namespace in await store.list_namespaces():
            if namespace.startswith("batch"):
                # One transaction: the whole batch or none of it.
                assert len(await store.list_metadata_keys(namespace)) == 200
        for i in batches:
            assert len(await store.list_metadata_keys(f"batch{i}")) == 200
        assert await store.count_history("s") == len(stored)


CONCURRENT = r"""
import asyncio, sys
from aalis_api_memory import Put
from aalis_plugin_memory_sqlite import SqliteMemory
from aalis_schema_message import Message

async def main(path, name, count, go):
    while not __import__("os").path.exists(go):
        await asyncio.sleep(0.001)
    async with SqliteMemory(path) as store:
        for i in range(count):
            await store.save_message("shared", Message(role="user", content=f"{name}-{i}", timestamp=5))
            await store.save_message(name, Message(role="assistant", content=str(i), timestamp=i))
            if i % 10 == 0:
                await store.commit_metadata([Put(name, f"k{i}", {"i": i}), Put("shared", name, {"i": i})])
                await store.archive_span(name, 5)
            if i % 7 == 0:
                await store.get_history("shared", 20)
                await store.count_history("shared")
    print("done", flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
"""


@pytest.mark.timeout(180)
def test_two_processes_share_one_file(tmp_path: Path) -> None:
    script = tmp_path / "sharing_writer.py"  # not "concurrent.py": it would shadow the stdlib
    script.write_text(CONCURRENT)
    path = tmp_path / "shared.db"
    go = tmp_path / "go"
    count = 300
    children = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), name, str(count), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    time.sleep(0.3)  # both interpreters up, so they really open the new file together
    go.touch()
    for child in children:
        out, err = child.communicate(timeout=150)
        assert child.returncode == 0, err
        assert "locked" not in err
        assert out.strip() == "done"
    asyncio.run(_check_shared(path, count))
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


async def _check_shared(path: Path, count: int) -> None:
    async with SqliteMemory(path) as store:
        shared = [m.content or "" for m in await store.get_full_history("shared", float("inf"))]
        assert len(shared) == 2 * count
        for name in ("alpha", "beta"):
            # Same timestamp everywhere: the insertion sequence alone keeps each writer's order.
            assert [c for c in shared if c.startswith(name)] == [
                f"{name}-{i}" for i in range(count)
            ]
            own = await store.get_full_history(name, float("inf"))
            assert [m.content for m in own] == [str(i) for i in range(count)]
            assert len(await store.list_metadata_keys(name)) == count // 10
        assert await store.count_history("shared") == 2 * count
        assert sorted(await store.list_metadata_keys("shared")) == ["alpha", "beta"]
        sessions = {info.session_id: info for info in await store.list_sessions()}
        assert sessions["alpha"].active + sessions["alpha"].archived == count
