"""Conformance: the project's extensions ``list_sessions``, ``export_session`` and
``import_messages`` (docs/architecture.md). ``list_namespaces`` is covered with metadata.

**[decided]** ``SessionInfo.active`` and ``.archived`` count stored messages of every kind
(markers included): they describe storage, as export and migrate see it. The number of
conversation messages is ``count_history``.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from aalis_api_memory import FullMemoryService, SessionInfo, StoredMessage
from aalis_schema_message import now_ms

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    T0,
    conformance,
    full_message,
    has,
    history_state,
    marker,
    msg,
    stamped,
    texts,
    without_ids,
)


@conformance
class ExtensionsConformance(ConformanceBase):
    # -- list_sessions --------------------------------------------------------------------

    async def test_list_sessions_counts_and_orders_newest_first(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "list_sessions")
        assert await memory.list_sessions() == []
        for i in range(4):
            await memory.save_message("old", msg(f"o{i}", ts=i))
        await memory.save_message("old", marker("M", ts=4))
        await memory.archive_span("old", 2)
        await memory.save_message("new", msg("n", ts=50))
        await memory.save_message("middle", msg("m", ts=20))
        await memory.save_message("middle", msg("earlier but saved later", ts=10))
        assert await memory.list_sessions() == [
            SessionInfo(session_id="new", active=1, archived=0, last_timestamp=T0 + 50),
            SessionInfo(session_id="middle", active=2, archived=0, last_timestamp=T0 + 20),
            SessionInfo(session_id="old", active=3, archived=2, last_timestamp=T0 + 4),
        ]

    async def test_list_sessions_last_timestamp_covers_archived_and_markers(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "list_sessions")
        await memory.save_message("a", msg("a", ts=1))
        await memory.save_message("a", marker("late marker", ts=30))
        await memory.save_message("b", msg("b", ts=20))
        await memory.archive_span("a", INF)
        assert await memory.list_sessions() == [
            SessionInfo(session_id="a", active=0, archived=2, last_timestamp=T0 + 30),
            SessionInfo(session_id="b", active=1, archived=0, last_timestamp=T0 + 20),
        ]

    async def test_list_sessions_forgets_cleared_and_emptied_sessions(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "list_sessions")
        await memory.save_message("a", msg("a", ts=1))
        await memory.save_message("b", msg("b", ts=2))
        await memory.save_message("c", msg("c", ts=3))
        await memory.clear_session("a")
        if has(memory, "delete_messages_by_timestamps"):
            await memory.delete_messages_by_timestamps("b", [T0 + 2])
            expected = ["c"]
        else:
            expected = ["c", "b"]
        assert [info.session_id for info in await memory.list_sessions()] == expected

    async def test_list_sessions_ignores_metadata(self, memory: FullMemoryService) -> None:
        self.require(memory, "list_sessions")
        await memory.save_metadata("summary", "s", {"text": "x"})
        assert await memory.list_sessions() == []

    # -- export_session -------------------------------------------------------------------

    async def test_export_gives_every_message_in_order_with_archive_flags(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "export_session")
        saved = [full_message(ts=2), msg("first", ts=0), marker("M", ts=1), msg("tie", ts=2)]
        for message in saved:
            await memory.save_message("s", message)
        await memory.archive_span("s", 2)
        exported = await memory.export_session("s")
        assert exported == [
            StoredMessage(saved[1], True),
            StoredMessage(saved[2], True),
            StoredMessage(saved[0], False),
            StoredMessage(saved[3], False),
        ]
        assert await memory.export_session("nobody") == []

    async def test_export_returns_copies(self, memory: FullMemoryService) -> None:
        self.require(memory, "export_session")
        await memory.save_message("s", msg("x", ts=0, metadata={"a": [1]}))
        [record] = await memory.export_session("s")
        assert record.message.metadata is not None
        record.message.metadata["a"].append(2)
        assert (await memory.get_history("s"))[0].metadata == {"a": [1]}

    # -- import_messages ------------------------------------------------------------------

    async def test_import_keeps_timestamps_flags_and_order(self, memory: FullMemoryService) -> None:
        self.require(memory, "import_messages", "export_session")
        records = [
            StoredMessage(msg("a", ts=5), True),
            StoredMessage(marker("M", ts=6), True),
            StoredMessage(full_message(ts=7), False),
            StoredMessage(msg("tie-1", ts=7), False),
            StoredMessage(msg("tie-2", ts=7)),
        ]
        assert await memory.import_messages("s", records) == 5
        assert await memory.export_session("s") == records
        assert texts(await memory.get_history("s", INF)) == ["full content", "tie-1", "tie-2"]

    async def test_import_merges_into_an_existing_session_by_timestamp(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "import_messages")
        await memory.save_message("s", msg("live-1", ts=1))
        await memory.save_message("s", msg("live-3", ts=3))
        assert (
            await memory.import_messages(
                "s",
                [StoredMessage(msg("imported-0", ts=0)), StoredMessage(msg("imported-3", ts=3))],
            )
            == 2
        )
        assert texts(await memory.get_history("s", INF)) == [
            "imported-0",
            "live-1",
            "live-3",
            "imported-3",
        ]

    async def test_export_then_import_reproduces_a_session(self, memory: FullMemoryService) -> None:
        self.require(memory, "import_messages", "export_session")
        for i in range(12):
            await memory.save_message(
                "src", msg(f"m{i}", ts=i // 3) if i % 5 else marker(f"M{i}", ts=i // 3)
            )
        await memory.archive_span("src", 7, keep=[2, 4])
        exported = await memory.export_session("src")
        # A copy inside one store takes new ids: ids are unique in the whole store.
        copies = [
            StoredMessage(r.message.with_id(f"copy-{i}"), r.archived)
            for i, r in enumerate(exported)
        ]
        assert await memory.import_messages("dst", copies) == 12
        assert await memory.export_session("dst") == copies
        assert without_ids(await memory.get_history("dst", INF)) == without_ids(
            await memory.get_history("src", INF)
        )
        if has(memory, "count_history"):
            assert await memory.count_history("dst") == await memory.count_history("src")

    async def test_import_without_timestamp_stamps_now(self, memory: FullMemoryService) -> None:
        self.require(memory, "import_messages")
        before = now_ms()
        unstamped = msg("unstamped")
        await memory.import_messages("s", [StoredMessage(unstamped)])
        after = now_ms()
        [message] = await memory.get_history("s")
        assert message.timestamp is not None
        assert before <= message.timestamp <= after
        assert message == stamped(unstamped, message.timestamp)

    async def test_import_of_nothing(self, memory: FullMemoryService) -> None:
        self.require(memory, "import_messages")
        assert await memory.import_messages("s", []) == 0
        assert await memory.get_history("s") == []

    @pytest.mark.parametrize(
        "bad",
        [msg("bare message, not a record", ts=9), {"message": {"role": "user"}}, None, "text"],
        ids=["message", "dict", "none", "str"],
    )
    async def test_import_with_a_bad_record_writes_nothing(
        self, memory: FullMemoryService, bad: Any
    ) -> None:
        self.require(memory, "import_messages")
        await memory.save_message("s", msg("existing", ts=0))
        before = await history_state(memory, "s")
        with pytest.raises(TypeError):
            await memory.import_messages("s", [StoredMessage(msg("good", ts=1)), bad])
        assert await history_state(memory, "s") == before

    async def test_import_refuses_a_bare_string(self, memory: FullMemoryService) -> None:
        self.require(memory, "import_messages")
        with pytest.raises(TypeError):
            await cast(Any, memory).import_messages("s", "records")
        assert await memory.get_history("s") == []

    @pytest.mark.parametrize("keyed", [True, False], ids=["records-as-keys", "empty"])
    async def test_import_refuses_a_mapping(self, memory: FullMemoryService, keyed: bool) -> None:
        # A dict iterates over its keys: records used as keys must not slip in as a batch,
        # and an empty dict is a wrong type, not an empty batch (the typed signature is a
        # Sequence[StoredMessage]; every backend refuses a str or a Mapping the same way).
        self.require(memory, "import_messages")
        records = {StoredMessage(msg("keyed", ts=1)): True} if keyed else {}
        with pytest.raises(TypeError):
            await cast(Any, memory).import_messages("s", records)
        assert await memory.get_history("s") == []


__all__ = ["ExtensionsConformance"]
