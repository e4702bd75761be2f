"""Another process holding SQLite's write lock: reads go on, writes give up within one timeout.

A child process takes the write lock (``BEGIN IMMEDIATE``) and keeps it far longer than the
store's busy timeout. Meanwhile, in this process:

- a save is started first (it waits for the lock on the writer thread), then a read of
  another session: the read must finish while the save is still waiting, because reads
  run on their own connection and WAL readers need no lock;
- several saves queued together (one group commit) must all fail with "database is locked"
  within one busy timeout, not one timeout per save.

The bounds below are generous multiples of the busy timeout: they separate "one deadline"
from "one deadline per job", they do not measure speed.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from aalis_plugin_memory_sqlite import SqliteMemory
from aalis_schema_message import Message

BUSY_MS = 1500

HOLDER = r"""
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO metadata (namespace, key, data, updated_at) VALUES ('x', 'y', '{}', 0)")
print("locked", flush=True)
sys.stdin.readline()  # hold the lock until told (or until the test dies)
conn.execute("ROLLBACK")
"""


def m(text: str, ts: int) -> Message:
    return Message(role="user", content=text, timestamp=ts)


class Holder:
    """A child process that takes the write lock on ``start()`` and keeps it until ``release()``."""

    def __init__(self, script: Path, db_path: Path) -> None:
        self.script = script
        self.db_path = db_path
        self.child: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.child = subprocess.Popen(
            [sys.executable, str(self.script), str(self.db_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.child.stdout is not None
        assert self.child.stdout.readline().strip() == "locked"

    def release(self) -> None:
        child = self.child
        if child is None or child.poll() is not None:
            return
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.flush()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()


@pytest.fixture
def holder(tmp_path: Path, db_path: Path) -> Iterator[Holder]:
    script = tmp_path / "holder.py"
    script.write_text(HOLDER, encoding="utf-8")
    lock_holder = Holder(script, db_path)
    try:
        yield lock_holder
    finally:
        lock_holder.release()


@pytest.mark.timeout(60)
async def test_reads_of_another_session_do_not_wait_behind_a_blocked_save(
    db_path: Path, holder: Holder
) -> None:
    async with SqliteMemory(db_path, busy_timeout_ms=BUSY_MS) as store:
        for i in range(20):
            await store.save_message("other", m(f"o{i}", i))
        await store.save_metadata("ns", "k", {"v": 1})
        holder.start()

        save = asyncio.ensure_future(store.save_message("mine", m("waits", 100)))
        await asyncio.sleep(0.05)  # the writer thread is now inside the busy wait
        assert not save.done()
        history = await store.get_history("other", 5)
        sessions = await store.list_sessions()
        data = await store.get_metadata("ns", "k")
        assert not save.done()  # the reads came back while the save still waits
        assert [msg.content for msg in history] == ["o15", "o16", "o17", "o18", "o19"]
        assert [info.session_id for info in sessions] == ["other"]
        assert data == {"v": 1}

        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await save
        assert await store.count_history("mine") == 0


@pytest.mark.timeout(60)
async def test_a_group_of_saves_fails_within_one_busy_timeout(
    db_path: Path, holder: Holder
) -> None:
    async with SqliteMemory(db_path, busy_timeout_ms=BUSY_MS) as store:
        await store.save_message("warm", m("up", 0))
        holder.start()
        # One save occupies the writer thread in its busy wait; the eight queued behind it
        # are merged into one group commit when it gives up.
        first = asyncio.ensure_future(store.save_message("s", m("first", 1)))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        group = [
            asyncio.ensure_future(store.save_message("s", m(f"g{i}", 2 + i))) for i in range(8)
        ]
        results = await asyncio.gather(first, *group, return_exceptions=True)
        elapsed = time.monotonic() - started
        assert all(isinstance(r, sqlite3.OperationalError) for r in results), results
        # first's timeout, then ONE more for the whole group (the old retry-each-alone path
        # waited 1 + 8 timeouts here)
        assert elapsed < 4 * BUSY_MS / 1000, elapsed
        assert await store.count_history("s") == 0


@pytest.mark.timeout(60)
async def test_a_save_succeeds_once_the_lock_is_released_within_the_timeout(
    db_path: Path, holder: Holder
) -> None:
    async with SqliteMemory(db_path, busy_timeout_ms=10_000) as store:
        await store.save_message("warm", m("up", 0))
        holder.start()
        save = asyncio.ensure_future(store.save_message("s", m("lands", 1)))
        await asyncio.sleep(0.2)
        assert not save.done()
        holder.release()
        await save
        assert [msg.content for msg in await store.get_history("s")] == ["lands"]
