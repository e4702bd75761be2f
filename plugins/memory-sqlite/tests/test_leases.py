"""Leases across processes on one file: one holder at a time, whatever the timing.

The kit's race runs on one store object, whose calls one worker thread serialises; here the
attempts come from separate processes (each its own connection and its own worker), so only
the ``BEGIN IMMEDIATE`` transaction of leases.py keeps two of them from both winning.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from aalis_plugin_memory_sqlite import SqliteMemory

CONTENDER = r"""
import asyncio, pathlib, sys
from aalis_plugin_memory_sqlite import SqliteMemory

async def main(path, me, barrier, count):
    async with SqliteMemory(path) as store:
        # every child opens the file first; then they all race at once
        (pathlib.Path(barrier) / me).touch()
        while len(list(pathlib.Path(barrier).iterdir())) < count:
            await asyncio.sleep(0.001)
        won = 0
        for round_ in range(40):
            if await store.acquire_lease(f"turn:{round_}", me, 60_000):
                won += 1
                print(f"won {round_}", flush=True)
        print(f"done {won}", flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


@pytest.mark.timeout(120)
def test_of_processes_racing_for_forty_leases_exactly_one_wins_each(tmp_path: Path) -> None:
    script = tmp_path / "contender.py"
    script.write_text(CONTENDER)
    path = tmp_path / "leases.db"
    barrier = tmp_path / "ready"
    barrier.mkdir()
    children = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), f"process-{i}", str(barrier), "4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    outputs = [child.communicate(timeout=90) for child in children]
    for child, (_out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
    rounds = [
        int(line.split()[1])
        for out, _ in outputs
        for line in out.splitlines()
        if line.startswith("won ")
    ]
    assert sorted(rounds) == list(range(40))  # every lease has exactly one holder


async def test_two_stores_on_one_file_see_each_others_leases(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with SqliteMemory(path) as one, SqliteMemory(path) as two:
        assert await one.acquire_lease("turn:s", "A", 60_000) is True
        assert await two.acquire_lease("turn:s", "B", 60_000) is False
        assert await two.release_lease("turn:s", "B") is False
        assert await one.release_lease("turn:s", "A") is True
        assert await two.acquire_lease("turn:s", "B", 150) is True
        await asyncio.sleep(0.3)
        assert await one.acquire_lease("turn:s", "A", 60_000) is True  # expired: taken over
        assert await two.release_lease("turn:s", "B") is False
