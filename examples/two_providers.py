"""Two consumers, two memory providers: pinning with ``[consumers.<consumer>]``.

A host script (no CLI): two small plugins, ``journal`` and ``scratchpad``, both use the
``memory`` capability. The configuration pins ``journal`` to SQLite (kept on disk) and
``scratchpad`` to the in-memory store (gone when the process ends), while the host's own
handle follows ``[capabilities.memory]``. Then the in-memory provider is stopped to show
that a pinned handle becomes absent instead of falling back to another store.

Run it with ``python examples/two_providers.py [DATA_DIR]`` (default: a temporary folder).
See docs/host/providers.md.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from aalis_api_memory import memory
from aalis_plugin_memory_inmemory import MemoryInmemory
from aalis_plugin_memory_sqlite import MemorySqlite
from aalis_schema_message import Message

from aalis_core import Host, Plugin, PluginContext


class Journal(Plugin):
    """Keeps a durable log of what happened."""

    name = "journal"
    uses = {"memory": memory}

    async def start(self, ctx: PluginContext) -> None:
        self.ctx = ctx

    async def write(self, text: str) -> None:
        await self.ctx.caps.memory.use.save_message("journal", Message(role="notice", content=text))


class Scratchpad(Plugin):
    """Keeps throwaway working notes."""

    name = "scratchpad"
    uses = {"memory": memory}

    async def start(self, ctx: PluginContext) -> None:
        self.ctx = ctx

    async def write(self, text: str) -> None:
        await self.ctx.caps.memory.use.save_message("scratch", Message(role="notice", content=text))


def config(data_dir: Path) -> dict[str, Any]:
    """The same tables an ``aalis.toml`` would hold."""
    return {
        "host": {"data_dir": str(data_dir), "log_level": "warning"},
        "plugins": {"memory-sqlite": {"path": "journal.db"}},
        # The host's default (and every consumer without its own pin):
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
        # Per-consumer pins win over the default:
        "consumers": {
            "journal": {"memory": "memory-sqlite"},
            "scratchpad": {"memory": "memory-inmemory"},
        },
    }


async def main(data_dir: Path) -> None:
    journal, scratchpad = Journal(), Scratchpad()
    # discover=False: exactly these plugins, whatever else is installed. With discovery on
    # (the default) the installed backends are found by their entry points instead.
    host = Host(
        config(data_dir), [MemorySqlite(), MemoryInmemory(), journal, scratchpad], discover=False
    )
    async with host:
        for info in host.plugins():
            if info.bindings:
                print(f"{info.name}: memory -> {info.bindings['memory']}")

        await journal.write("deployed v2")
        await scratchpad.write("try a smaller batch size")

        sqlite = host.capability(memory, provider="memory-sqlite").use
        inmemory = host.capability(memory, provider="memory-inmemory").use
        print(
            f"memory-sqlite holds: {[m.content for m in await sqlite.get_history('journal')]}"
            f" and {len(await sqlite.get_history('scratch'))} scratch messages"
        )
        print(
            f"memory-inmemory holds: {[m.content for m in await inmemory.get_history('scratch')]}"
            f" and {len(await inmemory.get_history('journal'))} journal messages"
        )

        await host.stop_plugin("memory-inmemory")
        handle = scratchpad.ctx.caps.memory
        print(
            f"after stopping memory-inmemory: scratchpad memory present={handle.present} "
            f"(pinned to {handle.pinned}, no fallback to memory-sqlite)"
        )
        try:
            await scratchpad.write("lost?")
        except Exception as exc:  # CapabilityAbsent: names the capability and the consumer
            print(f"scratchpad.write -> {type(exc).__name__}: {exc}")


def run(data_dir: Path) -> None:
    asyncio.run(main(data_dir))
    print(f"journal kept on disk: {sorted(p.name for p in data_dir.glob('*.db'))}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            run(Path(tmp))
