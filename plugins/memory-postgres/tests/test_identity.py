"""Message ids on PostgreSQL beyond the kit: what a refused id leaves behind, across hosts.

The kit (test_conformance.py) checks the rules of docs/reference/memory-contract.md
("Message identity"); these check what only a store with counters and several hosts has: a
refused save or marker changes no counter and no guard entry, and two hosts racing for one
id end with exactly one message. Data written before ids existed: test_schema.py.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from aalis_api_memory import MessageIdConflict, MetadataGuard
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
from aalis_schema_message import Message


def _msg(content: str, ts: int, ident: str) -> Message:
    return Message(role="user", content=content, timestamp=ts, id=ident)


async def test_a_refused_save_changes_no_counter(memory: PostgresMemory) -> None:
    await memory.save_message("s", _msg("first", 1, "taken"))
    with pytest.raises(MessageIdConflict):
        await memory.save_message("other", _msg("second", 2, "taken"))
    assert await memory.count_history("other") == 0
    assert [info.session_id for info in await memory.list_sessions()] == ["s"]
    assert await memory.count_history("s") == 1


async def test_a_marker_with_a_stored_id_rolls_the_archive_back(memory: PostgresMemory) -> None:
    for i in range(3):
        await memory.save_message("s", _msg(f"m{i}", i, f"id{i}"))
    snapshot = await memory.history_snapshot("s")
    guard = MetadataGuard(namespace="g", key="s", expected=None, data={"n": 1})
    marker = Message(role="notice", kind="compression", content="divider", timestamp=1, id="id2")
    with pytest.raises(MessageIdConflict):
        await memory.archive_exact("s", snapshot.ids[:2], guard=guard, marker=marker)
    assert [m.id for m in await memory.get_history("s", math.inf)] == ["id0", "id1", "id2"]
    assert await memory.get_metadata("g", "s") is None
    assert await memory.count_history("s") == 3


async def test_delete_by_ids_keeps_the_counters_right(memory: PostgresMemory) -> None:
    for i in range(4):
        await memory.save_message("s", _msg(f"m{i}", i, f"id{i}"))
    await memory.archive_span("s", 2)
    assert await memory.delete_messages_by_ids("s", ["id0", "id3"]) == 2
    [info] = await memory.list_sessions()
    assert (info.active, info.archived, info.last_timestamp) == (1, 1, 2)
    assert await memory.count_history("s") == 1
    assert await memory.delete_messages_by_ids("s", ["id1", "id2"]) == 2
    assert await memory.list_sessions() == []


async def test_hosts_racing_for_one_id_store_it_once(pg_config: PostgresConfig) -> None:
    stores = await asyncio.gather(*(PostgresMemory.connect(pg_config) for _ in range(4)))
    try:
        results = await asyncio.gather(
            *(
                store.save_message(f"s{i}", _msg(f"from {i}", i, "contested"))
                for i, store in enumerate(stores)
            ),
            return_exceptions=True,
        )
        assert sum(result is None for result in results) == 1
        assert all(isinstance(r, MessageIdConflict) for r in results if r is not None)
        [record] = await stores[0].get_messages_by_ids(["contested"])
        winner = results.index(None)
        assert (record.session_id, record.message.content) == (f"s{winner}", f"from {winner}")
        assert [info.session_id for info in await stores[0].list_sessions()] == [f"s{winner}"]
    finally:
        await asyncio.gather(*(store.close() for store in stores))
