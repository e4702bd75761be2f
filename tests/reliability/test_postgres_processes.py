"""PostgreSQL with several processes: kill -9 of a writer, and four hosts writing and compressing.

Children are small scripts written into ``tmp_path`` and run with this interpreter; each prints
a line only after the write it names was acknowledged (the awaited call returned), and flushes,
so every line the test reads is a promise the database must keep.

The four-host case is what a scaled-out deployment does: every host writes its own session and
one shared session, and compresses both every few turns through memory-summary (the offline
extractive summariser), so compressions of the shared session race across processes. Reported
and asserted: acknowledged writes vs stored ones, and archived messages outside the summary
(an archived message newer than the summary's ``covered_to`` was compressed away without being
summarised).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
testing = pytest.importorskip(
    "aalis_test_support.postgres", reason="the repository's test support is not installed"
)


@pytest.fixture
def pg_uri(postgres_uri: str) -> str:
    """The run's one PostgreSQL (the test support's session fixture)."""
    return postgres_uri


@pytest.fixture
def schema(pg_uri: str) -> Iterator[str]:
    name = testing.new_schema_name("rel")
    yield name
    testing.drop_schema(pg_uri, name)


WRITER = r"""
import asyncio, sys
from aalis_api_memory import Put
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
from aalis_schema_message import Message

async def main(uri, schema):
    store = await PostgresMemory.connect(PostgresConfig(uri=uri, schema=schema, max_pool_size=2))
    i = 0
    while True:
        await store.save_message("s", Message(role="user", content=f"m{i}", timestamp=1000 + i))
        print(f"msg {i}", flush=True)
        if i % 5 == 0:
            await store.commit_metadata([Put("ns", f"k{i}", {"i": i}), Put("ns", "last", {"i": i})])
            print(f"meta {i}", flush=True)
        if i % 25 == 0:
            await store.commit_metadata([Put(f"batch{i}", f"k{j}", {"j": j}) for j in range(200)])
            print(f"batch {i}", flush=True)
        if i % 40 == 39:
            await store.archive_span("s", 10)
            print(f"archive {i}", flush=True)
        i += 1

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _run_until_killed(script: Path, args: list[str], lines: int) -> tuple[list[str], str]:
    child = subprocess.Popen(
        [sys.executable, str(script), *args],
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
            if len(acknowledged) >= lines or time.monotonic() > deadline:
                break
    finally:
        os.kill(child.pid, signal.SIGKILL)
    assert child.stdout is not None
    assert child.stderr is not None
    rest = child.stdout.read()  # lines already buffered by the iterator's file
    errors = child.stderr.read()
    child.wait(timeout=30)
    acknowledged.extend(line.strip() for line in rest.splitlines() if line.strip())
    assert child.returncode == -signal.SIGKILL, errors
    return acknowledged, errors


@pytest.mark.timeout(120)
def test_kill_9_of_a_writer_loses_no_acknowledged_write(
    tmp_path: Path, pg_uri: str, schema: str
) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    acknowledged, errors = _run_until_killed(script, [pg_uri, schema], 500)
    messages = [int(line.split()[1]) for line in acknowledged if line.startswith("msg ")]
    metas = [int(line.split()[1]) for line in acknowledged if line.startswith("meta ")]
    batches = [int(line.split()[1]) for line in acknowledged if line.startswith("batch ")]
    archives = sum(1 for line in acknowledged if line.startswith("archive "))
    assert len(messages) >= 50, f"the writer acknowledged too little: {acknowledged[-3:]} {errors}"
    asyncio.run(_check_after_kill(pg_uri, schema, messages, metas, batches, archives))


async def _check_after_kill(
    uri: str, schema: str, messages: list[int], metas: list[int], batches: list[int], archives: int
) -> None:
    from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory

    store = await PostgresMemory.connect(PostgresConfig(uri=uri, schema=schema))
    try:
        stored = [m.content for m in await store.get_full_history("s", float("inf"))]
        assert stored[: len(messages)] == [f"m{i}" for i in messages]
        assert len(stored) <= len(messages) + 1  # at most the write that was in flight
        keys = set(await store.list_metadata_keys("ns"))
        assert {f"k{i}" for i in metas} <= keys
        last = await store.get_metadata("ns", "last")
        assert last is not None
        assert last["i"] >= max(metas)
        for namespace in await store.list_namespaces():
            if namespace.startswith("batch"):  # one transaction: all of it or none
                assert len(await store.list_metadata_keys(namespace)) == 200
        for i in batches:
            assert len(await store.list_metadata_keys(f"batch{i}")) == 200
        (info,) = [i for i in await store.list_sessions() if i.session_id == "s"]
        # The counters moved with the rows, in the same transactions.
        assert info.active + info.archived == len(stored)
        assert info.archived in (10 * archives, 10 * archives + 10)
        assert await store.count_history("s") == info.active
    finally:
        await store.close()


COMPRESSING_HOST = r"""
import asyncio, sys
from aalis_core import Host
from aalis_api_memory import compression, memory
from aalis_plugin_memory_postgres import MemoryPostgres
from aalis_plugin_memory_summary import MemorySummary
from aalis_schema_message import Message

async def main(uri, schema, data_dir, name, index, count, go):
    config = {
        "host": {"data_dir": data_dir},
        "capabilities": {"memory": {"provider": "memory-postgres"}},
        "plugins": {"memory-postgres": {"uri": uri, "schema": schema, "max_pool_size": 3}},
    }
    async with Host(config, [MemoryPostgres(), MemorySummary()], discover=False) as host:
        store = host.capability(memory).use
        compressor = host.capability(compression).use
        while not __import__("os").path.exists(go):
            await asyncio.sleep(0.005)
        for i in range(count):
            role = "user" if i % 2 == 0 else "assistant"
            for sid in (name, "shared"):
                text = f"{name} turn {i}: the number of the day is {i * 7 + index}."
                await store.save_message(sid, Message(role=role, content=text, timestamp=i * 10 + index))
                print(f"ack {sid} {text}", flush=True)
            if i % 12 == 11:
                for sid in (name, "shared"):
                    try:
                        await compressor.compress(sid)
                        print(f"compressed {sid}", flush=True)
                    except Exception as exc:
                        print(f"not-compressed {sid} {type(exc).__name__}", flush=True)
    print("done", flush=True)

asyncio.run(main(*sys.argv[1:5], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]))
"""

HOSTS = 4
TURNS = 64  # the last compression is at turn 59: the last turns stay active


@pytest.mark.timeout(240)
def test_four_hosts_writing_and_compressing_lose_nothing_and_summarise_all_they_archive(
    tmp_path: Path, pg_uri: str, schema: str
) -> None:
    pytest.importorskip("aalis_plugin_memory_summary", reason="memory-summary is not installed")
    script = tmp_path / "compressing_host.py"
    script.write_text(COMPRESSING_HOST)
    go = tmp_path / "go"
    names = [f"host{n}" for n in range(HOSTS)]
    children = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                pg_uri,
                schema,
                str(tmp_path / name),
                name,
                str(index),
                str(TURNS),
                str(go),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index, name in enumerate(names)
    ]
    time.sleep(1.0)  # every host up and connected, so they really run together
    go.touch()
    acknowledged: dict[str, list[str]] = {}
    compressions: dict[str, int] = {"done": 0, "refused": 0}
    for child in children:
        out, err = child.communicate(timeout=200)
        assert child.returncode == 0, err[-3000:]
        lines = out.splitlines()
        assert lines[-1] == "done"
        for line in lines:
            if line.startswith("ack "):
                _ack, sid, text = line.split(" ", 2)
                acknowledged.setdefault(sid, []).append(text)
            elif line.startswith("compressed "):
                compressions["done"] += 1
            elif line.startswith("not-compressed "):
                compressions["refused"] += 1
    report = asyncio.run(_count(pg_uri, schema, acknowledged))
    report["compressions"] = compressions
    print(json.dumps(report, indent=2))
    (tmp_path / "report.json").write_text(json.dumps(report))
    assert report["acknowledged"] == HOSTS * TURNS * 2
    assert report["stored"] == report["acknowledged"]
    assert report["lost"] == 0
    assert report["duplicated"] == 0
    assert report["archived"] > 0, "nothing was compressed: the test proved nothing"
    assert report["archived_outside_summary"] == 0


async def _count(uri: str, schema: str, acknowledged: dict[str, list[str]]) -> dict[str, object]:
    from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory

    store = await PostgresMemory.connect(PostgresConfig(uri=uri, schema=schema))
    try:
        stored = lost = duplicated = archived = outside = active = 0
        for sid, texts in acknowledged.items():
            records = await store.export_session(sid)
            conversation = [r for r in records if r.message.role in ("user", "assistant")]
            contents = [r.message.content for r in conversation]
            stored += len(contents)
            lost += len(set(texts) - set(contents))
            duplicated += len(contents) - len(set(contents))
            summary = await store.get_metadata("summary", sid)
            covered_to = summary.get("covered_to") if summary else None
            for record in conversation:
                if not record.archived:
                    active += 1
                if record.archived:
                    archived += 1
                    ts = record.message.timestamp
                    if covered_to is None or ts is None or ts > covered_to:
                        outside += 1
        return {
            "hosts": len([s for s in acknowledged if s != "shared"]),
            "acknowledged": sum(len(t) for t in acknowledged.values()),
            "stored": stored,
            "lost": lost,
            "duplicated": duplicated,
            "archived": archived,
            "active": active,
            "archived_outside_summary": outside,
        }
    finally:
        await store.close()
