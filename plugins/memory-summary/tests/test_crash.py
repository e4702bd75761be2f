"""A compression killed (``kill -9``) mid-commit: the next one neither repeats nor loses.

A subprocess runs a host on the shared store and kills itself at an injected point: right
after the pending ids are saved (before anything of the commit; the plugin's ``step``
callable, awaited at the named points of a commit), or, on MongoDB, right after the summary
entry is written and before the messages are archived (the window a backend without
transactions has). The parent then compresses again with a scripted model and checks
what the model was shown and what ended up archived.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import compression, memory
from aalis_plugin_memory_summary import MemorySummary
from aalis_schema_message import Message

from aalis_core import Host

SID = "crashy"
T0 = 1_700_000_000_000

CHILD = r"""
import asyncio, json, os, signal, sys
from aalis_core import Host
from aalis_api_memory import compression, memory
from aalis_plugin_memory_summary import MemorySummary
import importlib_metadata

config, backend, where = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
[ep] = importlib_metadata.entry_points(group="aalis.plugins", name=backend)

def die():
    os.kill(os.getpid(), signal.SIGKILL)

async def at_step(step):
    if step == where:
        die()

async def main():
    plugin = MemorySummary(step=at_step)
    async with Host(config, [ep.load()(), plugin], discover=False) as host:
        if where != "pending-saved":
            async def after_guard():
                die()
            host.capability(memory).use.inner.after_guard = after_guard
        await host.capability(compression).use.compress(sys.argv[4])
    print("the compression was not interrupted")

asyncio.run(main())
"""

CASES = [
    ("memory-sqlite", "pending-saved"),
    ("memory-mongodb", "pending-saved"),
    ("memory-mongodb", "guard-written"),
    ("memory-postgres", "pending-saved"),
]


def _config(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    config: dict[str, Any] = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": backend}},
        "plugins": {"memory-summary": {"summariser": "extractive"}},
    }
    if backend == "memory-sqlite":
        config["plugins"][backend] = {"path": str(tmp_path / "crash.db")}
    elif backend == "memory-postgres":
        uri = request.getfixturevalue("postgres_uri")  # conftest.py: the run's one server
        config["plugins"][backend] = {"uri": uri, "schema": f"crash_{uuid.uuid4().hex[:16]}"}
    else:
        uri = request.getfixturevalue("mongodb_uri")
        config["plugins"][backend] = {"uri": uri, "database": f"crash_{uuid.uuid4().hex[:16]}"}
    return config


def _backend(name: str) -> Any:
    import importlib_metadata

    for ep in importlib_metadata.entry_points(group="aalis.plugins", name=name):
        return ep.load()
    pytest.skip(f"plugin {name} is not installed")


async def _talk(host: Host, first: int, turns: int) -> list[str]:
    store = host.capability(memory).use
    said = []
    for i in range(first, first + turns):
        for j, role in enumerate(("user", "assistant")):
            text = f"{role} fact {i}: the code is {1000 + i}."
            await store.save_message(
                SID, Message(role=role, content=text, timestamp=T0 + 10 * i + j)
            )
            said.append(text)
    return said


def _shown(model: Any) -> list[str]:
    out = []
    for call in model.calls:
        for line in (call[-1].content or "").splitlines():
            match = re.match(r"#\d+ \w+: (.*)", line)
            if match:
                out.append(match.group(1))
    return out


@pytest.mark.parametrize(("backend", "where"), CASES)
def test_a_crash_mid_commit_heals_on_the_next_compression(
    backend: str,
    where: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    scripted_plugin: Any,
) -> None:
    cls = _backend(backend)
    config = _config(backend, tmp_path, request)

    async def before() -> list[str]:
        async with Host(config, [cls(), MemorySummary()], discover=False) as host:
            return await _talk(host, 0, 6)

    first = asyncio.run(before())
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(config), backend, where, SID],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, (child.stdout, child.stderr)

    model = scripted_plugin.ScriptedModel()
    model.replies.append('{"summary": "the whole conversation", "keep": []}')

    async def after() -> tuple[list[str], Any, Any, list[Message], list[Message]]:
        plugins = [cls(), scripted_plugin.ScriptedLlm(model), MemorySummary()]
        with_model = {**config, "plugins": {**config["plugins"], "memory-summary": {}}}
        async with Host(with_model, plugins, discover=False) as host:
            store = host.capability(memory).use
            crashed = await host.capability(compression).use.summary(SID)
            later = await _talk(host, 6, 2)
            await host.capability(compression).use.compress(SID)
            record = await host.capability(compression).use.summary(SID)
            active = await store.get_history(SID, math.inf)
            full = await store.get_full_history(SID, math.inf)
            return later, crashed, record, active, full

    later, crashed, record, active, full = asyncio.run(after())
    shown = _shown(model)
    archived = [m for m in full if m not in active and m.kind != "event-marker"]
    assert sorted(m.content or "" for m in archived) == sorted(first + later)  # none lost
    assert [m.kind for m in active] == ["event-marker"]
    assert len([m for m in full if m.kind == "event-marker"]) == 1
    assert record is not None
    assert record.text == "the whole conversation"
    if where == "guard-written":
        # The crashed commit's summary stands and covers the first six turns: the model
        # is shown only what came after, with that summary as the previous one.
        assert crashed is not None
        assert crashed.model == "extractive"
        assert shown == later
        assert f"Previous summary:\n{crashed.text}" in model.prompt()
    else:
        assert crashed is None  # nothing of the commit was written
        assert shown == first + later  # each message once
    assert len(shown) == len(set(shown))


def test_an_archive_failing_after_the_summary_keeps_it_and_the_next_run_finishes(
    tmp_path: Path, request: pytest.FixtureRequest, scripted_plugin: Any
) -> None:
    """MongoDB: ``update_many`` fails after the summary entry was written (no transaction).

    Restoring the previous summary would drop whatever part of the archive was done from
    both; the new summary is kept instead (``archive_failed``), and the next compression
    archives what it covers without showing it to the model again.
    """
    backend = "memory-mongodb"
    cls = _backend(backend)
    config = _config(backend, tmp_path, request)
    config["plugins"]["memory-summary"] = {}
    model = scripted_plugin.ScriptedModel()
    model.replies.extend(
        ['{"summary": "first six turns", "keep": []}', '{"summary": "all turns", "keep": []}']
    )

    async def scenario() -> None:
        plugins = [cls(), scripted_plugin.ScriptedLlm(model), MemorySummary()]
        async with Host(config, plugins, discover=False) as host:
            store = host.capability(memory).use
            service = host.capability(compression).use
            first = await _talk(host, 0, 6)

            async def fail() -> None:
                raise ConnectionError("connection reset during update_many")

            store.inner.after_guard = fail
            with pytest.raises(Exception, match="archive_failed"):
                await service.compress(SID)
            store.inner.after_guard = None
            record = await service.summary(SID)
            assert record is not None
            assert record.text == "first six turns"  # kept, not restored
            assert len(await store.get_history(SID, math.inf)) == 12
            later = await _talk(host, 6, 2)
            await service.compress(SID)
            assert _shown(model) == first + later  # the second call saw only the later turns
            assert (await service.summary(SID)).text == "all turns"
            active = await store.get_history(SID, math.inf)
            assert [m.kind for m in active] == ["event-marker"]

    asyncio.run(scenario())
