"""Insertion order across clients and processes: the shared sequence keeps ties ordered."""

from __future__ import annotations

import asyncio
import math
import sys
import textwrap

from aalis_api_memory import StoredMessage
from aalis_plugin_memory_mongodb import MongoMemory
from aalis_schema_message import Message

TS = 1_700_000_000_000
PER_WRITER = 40

WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from aalis_schema_message import Message
    from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory

    async def main(uri, database, prefix, count, timestamp):
        store = await MongoMemory.connect(
            MongoConfig(uri=uri, database=database, collection_prefix=prefix)
        )
        try:
            for i in range(int(count)):
                await store.save_message("shared", Message(role="user", content=f"proc-{i}", timestamp=int(timestamp)))
        finally:
            await store.close()

    asyncio.run(main(*sys.argv[1:]))
    """
)


async def writer(store: MongoMemory, name: str, until: asyncio.Future[object]) -> int:
    """Save ``name-0``, ``name-1``, ... until ``until`` is done (at least PER_WRITER)."""
    count = 0
    while count < PER_WRITER or (not until.done() and count < 3000):
        await store.save_message(
            "shared", Message(role="user", content=f"{name}-{count}", timestamp=TS)
        )
        count += 1
    return count


async def test_ties_keep_each_writers_order_across_clients_and_processes(memory, mongo_config):
    other = await MongoMemory.connect(mongo_config)  # a second client, its own pool
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WRITER,
            mongo_config.uri,
            mongo_config.database,
            mongo_config.collection_prefix,
            str(PER_WRITER),
            str(TS),
        )
        exited = asyncio.ensure_future(proc.wait())
        counts = await asyncio.gather(
            writer(memory, "a", exited), writer(other, "b", exited), writer(memory, "c", exited)
        )
        assert await exited == 0
    finally:
        await other.close()

    history = [message.content or "" for message in await memory.get_history("shared", math.inf)]
    assert len(history) == sum(counts) + PER_WRITER
    for name, count in (("a", counts[0]), ("b", counts[1]), ("c", counts[2]), ("proc", PER_WRITER)):
        mine = [content for content in history if content.startswith(f"{name}-")]
        assert mine == [f"{name}-{i}" for i in range(count)], name
    # the other process really wrote while this one did: its messages are interleaved
    positions = [i for i, content in enumerate(history) if content.startswith("proc-")]
    assert positions[-1] - positions[0] + 1 > len(positions)
    # every save got its own sequence number, and the stored order is the sequence order
    seqs = [
        doc["seq"] async for doc in memory._messages.find({}, sort=[("timestamp", 1), ("seq", 1)])
    ]
    assert len(set(seqs)) == len(seqs)
    assert seqs == sorted(seqs)


async def test_import_reserves_one_block_of_sequence_numbers(memory):
    await memory.save_message("s", Message(role="user", content="before", timestamp=TS))
    records = [StoredMessage(Message(role="user", content=f"i{i}", timestamp=TS)) for i in range(5)]
    await asyncio.gather(
        memory.import_messages("s", records),
        memory.save_message("s", Message(role="user", content="during", timestamp=TS)),
    )
    contents = [m.content for m in await memory.get_history("s", math.inf)]
    imported = [c for c in contents if c and c.startswith("i")]
    assert imported == [f"i{i}" for i in range(5)]
    assert contents[0] == "before"
    # the concurrent save lands before or after the whole block, never inside it
    position = contents.index("during")
    assert position in (1, len(contents) - 1)
