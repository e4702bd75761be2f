"""Conformance: message identity (``Message.id``) and the ``MessagesById`` group.

The rules are in docs/reference/memory-contract.md ("Message identity"). Every message a
store returns carries an id; a save keeps the id it was given and names one that had none;
ids are unique in the whole store and survive archiving, rewriting and export/import. The
cases that matter most are the ones timestamps cannot tell apart: two messages of one
session in one millisecond are still two messages, found and deleted one at a time.
"""

from __future__ import annotations

import pytest
from aalis_api_memory import (
    FullMemoryService,
    MessageIdConflict,
    MetadataGuard,
    RecentMessagesQuery,
    StoredMessage,
    StoredRecord,
)
from aalis_schema_message import Message

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    T0,
    conformance,
    has,
    marker,
    msg,
    texts,
)

GET = "get_messages_by_ids"
DELETE = "delete_messages_by_ids"


async def _every_read(memory: FullMemoryService, session_id: str) -> list[Message]:
    """The session's messages through every read the store offers."""
    found = list(await memory.get_history(session_id, INF))
    if has(memory, "get_full_history"):
        found += await memory.get_full_history(session_id, INF)
    if has(memory, "get_messages_by_session_range"):
        found += await memory.get_messages_by_session_range(session_id, T0 - 10, T0 + 10_000)
    if has(memory, "export_session"):
        found += [record.message for record in await memory.export_session(session_id)]
    if has(memory, "get_recent_messages_across_sessions"):
        records = await memory.get_recent_messages_across_sessions(RecentMessagesQuery(limit=100))
        found += [r.message for r in records if r.session_id == session_id]
    if has(memory, "history_snapshot"):
        found += (await memory.history_snapshot(session_id)).messages
    return found


@conformance
class MessageIdentityConformance(ConformanceBase):
    async def test_a_message_saved_without_an_id_is_read_back_with_one(
        self, memory: FullMemoryService
    ) -> None:
        for i in range(3):
            await memory.save_message("s", msg(f"m{i}", ts=i, id=None))
        await memory.save_message("s", marker(ts=3))
        reads = await _every_read(memory, "s")
        assert reads
        assert all(isinstance(m.id, str) and m.id for m in reads)
        ids = [m.id for m in await memory.get_history("s", INF)]
        assert len(set(ids)) == 4
        # Every read names a message by the same id.
        by_text = {m.content: m.id for m in await memory.get_history("s", INF)}
        assert all(by_text[m.content] == m.id for m in reads)

    async def test_a_save_with_an_id_keeps_it(self, memory: FullMemoryService) -> None:
        message = msg("named", ts=0, id="my-own-id")
        await memory.save_message("s", message)
        assert await memory.get_history("s") == [message]

    async def test_same_millisecond_messages_get_distinct_ids(
        self, memory: FullMemoryService
    ) -> None:
        for i in range(50):
            await memory.save_message(f"s{i % 2}", msg(f"m{i}", ts=0, id=None))
        ids = [m.id for sid in ("s0", "s1") for m in await memory.get_history(sid, INF)]
        assert len(ids) == 50
        assert len(set(ids)) == 50

    async def test_an_id_already_stored_is_refused_and_nothing_is_written(
        self, memory: FullMemoryService
    ) -> None:
        await memory.save_message("s", msg("first", ts=0, id="dup"))
        with pytest.raises(MessageIdConflict):
            await memory.save_message("s", msg("second", ts=1, id="dup"))
        with pytest.raises(MessageIdConflict):
            await memory.save_message("other", msg("third", ts=2, id="dup"))
        assert texts(await memory.get_history("s", INF)) == ["first"]
        assert await memory.get_history("other", INF) == []

    async def test_archiving_and_rewriting_keep_ids(self, memory: FullMemoryService) -> None:
        for i in range(4):
            await memory.save_message("s", msg(f"word{i}", ts=i, id=f"id{i}"))
        await memory.archive_span("s", 2)
        if has(memory, "update_message_content"):
            assert await memory.update_message_content("s", "word", "WORD") == 4
        if has(memory, "get_full_history"):
            every = await memory.get_full_history("s", INF)
            assert [m.id for m in every] == ["id0", "id1", "id2", "id3"]
        assert [m.id for m in await memory.get_history("s", INF)] == ["id2", "id3"]

    async def test_exact_archiving_keeps_ids_and_names_the_marker(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        for i in range(3):
            await memory.save_message("s", msg(f"m{i}", ts=i, id=f"id{i}"))
        snapshot = await memory.history_snapshot("s")
        assert [m.id for m in snapshot.messages] == ["id0", "id1", "id2"]
        guard = MetadataGuard(namespace="g", key="s", expected=None, data={"n": 1})
        await memory.archive_exact(
            "s", snapshot.ids[:2], guard=guard, marker=marker("divider", ts=1)
        )
        active = await memory.get_history("s", INF)
        assert [m.id for m in active if not m.is_control] == ["id2"]
        [divider] = [m for m in active if m.is_control]
        assert divider.id
        assert divider.id not in {"id0", "id1", "id2"}

    async def test_export_and_import_keep_ids(self, memory: FullMemoryService) -> None:
        self.require(memory, "export_session", "import_messages")
        for i in range(3):
            await memory.save_message("src", msg(f"m{i}", ts=i, id=f"id{i}"))
        exported = await memory.export_session("src")
        assert [r.message.id for r in exported] == ["id0", "id1", "id2"]
        await memory.clear_session("src")
        assert await memory.import_messages("dst", exported) == 3
        assert [m.id for m in await memory.get_history("dst", INF)] == ["id0", "id1", "id2"]

    async def test_import_of_a_stored_id_is_refused_whole(self, memory: FullMemoryService) -> None:
        self.require(memory, "import_messages")
        await memory.save_message("s", msg("kept", ts=0, id="taken"))
        records = [StoredMessage(msg("new", ts=1, id="fresh")), StoredMessage(msg("x", id="taken"))]
        with pytest.raises(MessageIdConflict):
            await memory.import_messages("t", records)
        assert await memory.get_history("t", INF) == []
        with pytest.raises(MessageIdConflict):
            await memory.import_messages(
                "t", [StoredMessage(msg("a", id="twice")), StoredMessage(msg("b", id="twice"))]
            )
        assert await memory.get_history("t", INF) == []

    async def test_import_names_records_without_an_id(self, memory: FullMemoryService) -> None:
        self.require(memory, "import_messages")
        await memory.import_messages(
            "s", [StoredMessage(msg(f"m{i}", ts=i, id=None)) for i in range(3)]
        )
        ids = [m.id for m in await memory.get_history("s", INF)]
        assert all(ids)
        assert len(set(ids)) == 3

    async def test_an_id_is_free_again_only_after_its_message_is_gone(
        self, memory: FullMemoryService
    ) -> None:
        await memory.save_message("s", msg("once", ts=0, id="again"))
        await memory.clear_session("s")
        # The same message restored (an import of a backup) may take its id back.
        await memory.save_message("s", msg("once", ts=0, id="again"))
        assert [m.id for m in await memory.get_history("s")] == ["again"]

    # -- MessagesById ----------------------------------------------------------------------

    async def test_get_by_ids_finds_any_session_archived_included_in_the_order_asked(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, GET)
        await memory.save_message("a", msg("a0", ts=0, id="a0"))
        await memory.save_message("a", msg("a1", ts=1, id="a1"))
        await memory.save_message("b", msg("b0", ts=0, id="b0"))
        await memory.archive_span("a", 1)
        found = await memory.get_messages_by_ids(["b0", "missing", "a0", "a1", "b0"])
        assert [(r.session_id, r.message.id, r.archived) for r in found] == [
            ("b", "b0", False),
            ("a", "a0", True),
            ("a", "a1", False),
        ]
        assert all(isinstance(r, StoredRecord) for r in found)
        assert found[0].message == (await memory.get_history("b"))[0]
        assert await memory.get_messages_by_ids([]) == []
        assert await memory.get_messages_by_ids(["nothing-here"]) == []

    async def test_get_by_ids_returns_copies(self, memory: FullMemoryService) -> None:
        self.require(memory, GET)
        await memory.save_message("s", msg("x", ts=0, id="m", metadata={"k": 1}))
        [record] = await memory.get_messages_by_ids(["m"])
        assert record.message.metadata is not None
        record.message.metadata["k"] = 2
        [again] = await memory.get_messages_by_ids(["m"])
        assert again.message.metadata == {"k": 1}

    async def test_delete_by_ids_deletes_one_of_two_in_one_millisecond(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, DELETE)
        await memory.save_message("s", msg("Bob: my PIN hint is the dog's name", ts=5, id="bob"))
        await memory.save_message("s", msg("Carol: I am vegan", ts=5, id="carol"))
        await memory.save_message("s", msg("later", ts=6, id="later"))
        assert await memory.delete_messages_by_ids("s", ["bob"]) == 1
        history = await memory.get_history("s", INF)
        assert [m.id for m in history] == ["carol", "later"]
        assert texts(history) == ["Carol: I am vegan", "later"]

    async def test_delete_by_ids_covers_the_archive_and_only_its_session(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, DELETE)
        for i in range(3):
            await memory.save_message("s", msg(f"m{i}", ts=i, id=f"s{i}"))
        await memory.save_message("t", msg("other", ts=0, id="t0"))
        await memory.archive_span("s", 2)
        assert await memory.delete_messages_by_ids("s", ["s0", "s2", "t0", "nope"]) == 2
        assert await memory.delete_messages_by_ids("s", []) == 0
        if has(memory, "get_full_history"):
            assert [m.id for m in await memory.get_full_history("s", INF)] == ["s1"]
        assert [m.id for m in await memory.get_history("t", INF)] == ["t0"]
        if has(memory, GET):
            assert [r.message.id for r in await memory.get_messages_by_ids(["s0", "s1"])] == ["s1"]

    async def test_bad_ids_are_refused_before_anything_changes(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, GET, DELETE)
        await memory.save_message("s", msg("x", ts=0, id="x"))
        for bad in ("x", b"x", {"x": 1}, None, 5):
            with pytest.raises(TypeError):
                await memory.get_messages_by_ids(bad)  # type: ignore[arg-type]
            with pytest.raises(TypeError):
                await memory.delete_messages_by_ids("s", bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await memory.delete_messages_by_ids("s", ["x", 3])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="never empty"):
            await memory.delete_messages_by_ids("s", ["x", ""])
        with pytest.raises(TypeError):
            await memory.delete_messages_by_ids(7, ["x"])  # type: ignore[arg-type]
        assert [m.id for m in await memory.get_history("s")] == ["x"]

    async def test_hostile_ids_are_values(self, memory: FullMemoryService) -> None:
        self.require(memory, GET, DELETE)
        hostile = ["'; DROP TABLE messages; --", '{"$gt": ""}', "$where", "a.b", "%", "_"]
        for i, ident in enumerate(hostile):
            await memory.save_message("s", msg(f"m{i}", ts=i, id=ident))
        found = await memory.get_messages_by_ids(hostile)
        assert [r.message.id for r in found] == hostile
        assert await memory.get_messages_by_ids(["%%", "__", "'"]) == []
        assert await memory.delete_messages_by_ids("s", ["%", "nothing"]) == 1
        assert len(await memory.get_history("s", INF)) == len(hostile) - 1


__all__ = ["MessageIdentityConformance"]
