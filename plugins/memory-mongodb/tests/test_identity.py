"""Message ids on MongoDB: documents stored before ids existed, races for one id.

The kit (test_conformance.py) checks the rules of docs/reference/memory-contract.md
("Message identity") on new data; these tests check what only this store has: documents
written by a version without ids (an ObjectId ``_id``, no id anywhere) read with their
``_id`` as id, the same on every read and after reopening, and are found and deleted by it;
clients racing for one id store it once; an import that loses the race for an id takes back
what it had written; a marker's id is checked before an exact archive changes anything.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from aalis_api_memory import MessageIdConflict, MetadataGuard, StoredMessage
from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory
from aalis_schema_message import Message
from bson import ObjectId

INF = math.inf


def _old_documents(raw_db: Any, prefix: str) -> list[ObjectId]:
    """Four messages as the version before ids wrote them: ObjectId keys, no id anywhere."""
    oids = [ObjectId() for _ in range(4)]
    rows = [
        ("s", 1, True, "user", "first"),
        ("s", 1, False, "assistant", "second"),
        ("s", 2, False, "user", "third"),
        ("t", 1, False, "user", "elsewhere"),
    ]
    raw_db[f"{prefix}messages"].insert_many(
        [
            {
                "_id": oid,
                "session_id": sid,
                "seq": seq,
                "timestamp": ts,
                "archived": archived,
                "role": role,
                "kind": None,
                "platform": None,
                "body": {"content": content},
            }
            for seq, (oid, (sid, ts, archived, role, content)) in enumerate(
                zip(oids, rows, strict=True), 1
            )
        ]
    )
    raw_db[f"{prefix}counters"].insert_one({"_id": "messages", "seq": len(oids)})
    return oids


async def _ids(store: MongoMemory, session_id: str) -> list[str | None]:
    return [m.id for m in await store.get_full_history(session_id, INF)]


async def test_messages_stored_before_ids_read_with_a_stable_id(
    raw_db: Any, mongo_config: MongoConfig
) -> None:
    oids = _old_documents(raw_db, mongo_config.collection_prefix)
    expected = [str(oid) for oid in oids]
    store = await MongoMemory.connect(mongo_config)
    try:
        assert await _ids(store, "s") == expected[:3]
        assert [m.id for m in await store.get_history("s", INF)] == expected[1:3]
        assert [r.message.id for r in await store.export_session("s")] == expected[:3]
        snapshot = await store.history_snapshot("s")
        assert [m.id for m in snapshot.messages] == expected[1:3]
        assert await _ids(store, "s") == expected[:3]  # every read, the same ids
    finally:
        await store.close()
    store = await MongoMemory.connect(mongo_config)
    try:
        assert await _ids(store, "s") == expected[:3]  # after reopening
        found = await store.get_messages_by_ids([expected[0], expected[3], expected[2]])
        assert [(r.session_id, r.message.content, r.archived) for r in found] == [
            ("s", "first", True),
            ("t", "elsewhere", False),
            ("s", "third", False),
        ]
        assert found[0].message == (await store.get_full_history("s", INF))[0]
        # Deleted by its id, only in its own session.
        assert await store.delete_messages_by_ids("s", [expected[1], expected[3]]) == 1
        assert [m.content for m in await store.get_full_history("s", INF)] == ["first", "third"]
        assert [m.id for m in await store.get_history("t")] == [expected[3]]
        assert await store.get_messages_by_ids([expected[1]]) == []
    finally:
        await store.close()


async def test_an_old_message_id_is_not_stored_twice(
    raw_db: Any, memory: MongoMemory, mongo_config: MongoConfig
) -> None:
    oids = _old_documents(raw_db, mongo_config.collection_prefix)
    taken = str(oids[2])
    with pytest.raises(MessageIdConflict):
        await memory.save_message("u", Message(role="user", content="x", timestamp=5, id=taken))
    with pytest.raises(MessageIdConflict):
        await memory.import_messages(
            "u",
            [
                StoredMessage(Message(role="user", content="new", timestamp=5, id="fresh")),
                StoredMessage(Message(role="user", content="copy", timestamp=6, id=taken)),
            ],
        )
    assert await memory.get_full_history("u", INF) == []
    # An id of the same shape that names no stored message is an id like any other.
    free = str(ObjectId())
    await memory.save_message("u", Message(role="user", content="ok", timestamp=7, id=free))
    assert [m.id for m in await memory.get_history("u")] == [free]


async def test_exact_archiving_names_old_messages_by_their_id(
    raw_db: Any, memory: MongoMemory, mongo_config: MongoConfig
) -> None:
    _old_documents(raw_db, mongo_config.collection_prefix)
    snapshot = await memory.history_snapshot("s")
    guard = MetadataGuard(namespace="g", key="s", expected=None, data={"n": 1})
    assert await memory.archive_exact("s", snapshot.ids[:1], guard=guard) == 1
    assert [m.content for m in await memory.get_history("s", INF)] == ["third"]


async def test_an_import_that_loses_the_race_for_an_id_takes_back_what_it_wrote(
    memory: MongoMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    await memory.save_message("s", Message(role="user", content="kept", timestamp=1, id="taken"))

    # Another writer stores "taken" between the import's check and its insert: here, the
    # check simply sees nothing, so the insert itself meets the stored id.
    async def check_sees_nothing(ids: Any, *, every: bool) -> None:
        return None

    monkeypatch.setattr(memory, "_refuse_stored_ids", check_sees_nothing)
    records = [
        StoredMessage(Message(role="user", content=f"m{i}", timestamp=2 + i, id=f"new-{i}"))
        for i in range(3)
    ]
    records.insert(2, StoredMessage(Message(role="user", content="dup", timestamp=9, id="taken")))
    with pytest.raises(MessageIdConflict):
        await memory.import_messages("t", records)
    assert await memory.get_full_history("t", INF) == []
    assert [m.content for m in await memory.get_history("s")] == ["kept"]
    assert await memory.get_messages_by_ids(["new-0", "new-1", "new-2"]) == []


async def test_clients_racing_for_one_id_store_it_once(mongo_config: MongoConfig) -> None:
    stores = [await MongoMemory.connect(mongo_config) for _ in range(4)]
    try:
        results = await asyncio.gather(
            *(
                store.save_message(
                    f"s{i}", Message(role="user", content=f"from {i}", timestamp=i, id="contested")
                )
                for i, store in enumerate(stores)
            ),
            return_exceptions=True,
        )
        assert sum(result is None for result in results) == 1
        assert all(isinstance(r, MessageIdConflict) for r in results if r is not None)
        winner = results.index(None)
        [record] = await stores[0].get_messages_by_ids(["contested"])
        assert (record.session_id, record.message.content) == (f"s{winner}", f"from {winner}")
        assert [info.session_id for info in await stores[0].list_sessions()] == [f"s{winner}"]
    finally:
        for store in stores:
            await store.close()


async def test_a_marker_with_a_stored_id_is_refused_before_anything_changes(
    memory: MongoMemory,
) -> None:
    for i in range(3):
        await memory.save_message(
            "s", Message(role="user", content=f"m{i}", timestamp=i, id=f"id{i}")
        )
    snapshot = await memory.history_snapshot("s")
    guard = MetadataGuard(namespace="g", key="s", expected=None, data={"n": 1})
    marker = Message(role="notice", kind="compression", content="divider", timestamp=1, id="id2")
    with pytest.raises(MessageIdConflict):
        await memory.archive_exact("s", snapshot.ids[:2], guard=guard, marker=marker)
    assert [m.id for m in await memory.get_history("s", INF)] == ["id0", "id1", "id2"]
    assert await memory.get_metadata("g", "s") is None
