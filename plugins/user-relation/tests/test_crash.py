"""``kill -9`` while facts are being derived: the next start reads the messages again."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from .conftest import ADA, World, host_for

CHILD = r"""
import asyncio, os, signal, sys
from aalis_core import Host
from aalis_api_memory import memory
from aalis_plugin_memory_sqlite._plugin import MemorySqlite
from aalis_plugin_user_relation._plugin import UserRelation
from aalis_plugin_user_relation import _deriver as deriver_module
from aalis_schema_message import Message, new_message_id

async def main():
    plugin = UserRelation()
    config = {"plugins": {"memory-sqlite": {"path": sys.argv[1]}}}
    async with Host(config, [MemorySqlite(), plugin], discover=False) as host:
        def extracting(*args, **kwargs):  # the extractor runs: the process dies in it
            print("extracting", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

        deriver_module.apply = extracting
        texts = ["I live in Paris.", "I moved to Berlin."]
        messages = [
            Message(id=new_message_id(), role="user", content=text,
                    timestamp=1_700_000_000_000 + i * 1000,
                    metadata={"platform": "cli", "user_id": "ada"})
            for i, text in enumerate(texts)
        ]
        for message in messages:  # both stored before the first is read
            await host.capability(memory).use.save_message("s", message)
        for message in messages:
            await host.emit("memory_messages_saved", session_id="s", messages=[message])
        await asyncio.sleep(10)
    print("not killed", flush=True)

asyncio.run(main())
"""


async def test_kill_9_during_extraction_is_backfilled_at_the_next_start(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", CHILD, str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == -9, child.stderr
    assert "extracting" in child.stdout
    host, plugin = host_for(db)
    async with host:
        world = World(host, plugin)
        deriver = plugin.active()[0]
        for _ in range(100):  # the worker reads the unread span as soon as it starts
            if not deriver.gaps and await deriver.settle(1.0):
                break
            await asyncio.sleep(0.05)
        every = await world.service.facts(ADA, include_superseded=True)
        assert [(f.value, f.current) for f in every] == [("Paris", False), ("Berlin", True)]
        marks = await world.memory.list_metadata("user-relation.progress")
        assert json.loads(json.dumps(marks[0].data)) == {
            "through": 1_700_000_001_000,
            "speakers": ["cli:ada"],
        }
