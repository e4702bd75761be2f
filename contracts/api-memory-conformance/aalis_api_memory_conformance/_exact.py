"""Conformance: exact archiving (``history_snapshot`` + ``archive_exact``).

The rules are in docs/reference/memory-contract.md ("Exact archiving"). Every case runs on one
store object, so any backend can run them; what they pin down is what a second process would
observe: a commit archives exactly the ids it was given or nothing, and the guard entry makes
two commits from one snapshot (or a commit after a clear) fail instead of both landing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aalis_api_memory import ArchiveConflict, FullMemoryService, MetadataGuard

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    conformance,
    has,
    history_state,
    marker,
    msg,
    texts,
)

NS = "exact-guard"


def guard(
    key: str = "s", expected: dict[str, Any] | None = None, data: dict[str, Any] | None = None
) -> MetadataGuard:
    return MetadataGuard(
        namespace=NS, key=key, expected=expected, data=data if data is not None else {"rev": 1}
    )


async def _fill(memory: FullMemoryService, session_id: str = "s", count: int = 4) -> None:
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        await memory.save_message(session_id, msg(f"m{i}", role=role, ts=i * 10))


async def _state(memory: FullMemoryService, session_id: str = "s") -> Any:
    return (await history_state(memory, session_id), await memory.get_metadata(NS, session_id))


@conformance
class ExactArchiveConformance(ConformanceBase):
    async def test_snapshot_is_the_active_history_with_one_id_each(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory)
        await memory.save_message("s", marker("M", ts=15))
        await memory.archive_span("s", 1)
        snapshot = await memory.history_snapshot("s")
        assert list(snapshot.messages) == await memory.get_history("s", INF)
        assert len(snapshot.ids) == len(snapshot.messages) == 4
        assert all(isinstance(ident, str) and ident for ident in snapshot.ids)
        assert len(set(snapshot.ids)) == 4
        again = await memory.history_snapshot("s")
        assert again.ids == snapshot.ids  # ids are stable while nothing changes
        assert (await memory.history_snapshot("nobody")).messages == ()

    async def test_archives_exactly_the_ids_and_commits_guard_and_marker(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory)
        snapshot = await memory.history_snapshot("s")
        # A save with an older timestamp lands inside the span after the snapshot ...
        await memory.save_message("s", msg("late", ts=5))
        # ... and one after it.
        await memory.save_message("s", msg("new", ts=100))
        chosen = [snapshot.ids[0], snapshot.ids[1], snapshot.ids[3]]
        divider = marker("[compressed]", ts=30)
        count = await memory.archive_exact("s", chosen, guard=guard(), marker=divider)
        assert count == 3
        assert texts(await memory.get_history("s", INF)) == ["late", "m2", "[compressed]", "new"]
        assert await memory.get_metadata(NS, "s") == {"rev": 1}
        if has(memory, "count_history"):
            assert await memory.count_history("s") == 3
        if has(memory, "get_full_history"):
            assert len(await memory.get_full_history("s", INF)) == 7

    async def test_a_changed_guard_entry_is_a_conflict_and_changes_nothing(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory)
        snapshot = await memory.history_snapshot("s")
        await memory.save_metadata(NS, "s", {"rev": "someone else"})
        before = await _state(memory)
        with pytest.raises(ArchiveConflict) as caught:
            await memory.archive_exact("s", snapshot.ids, guard=guard(), marker=marker(ts=40))
        assert caught.value.reason == "guard"
        assert await _state(memory) == before
        # Expecting a value that was deleted meanwhile is a conflict too.
        await memory.delete_metadata(NS, "s")
        before = await _state(memory)
        with pytest.raises(ArchiveConflict):
            await memory.archive_exact(
                "s", snapshot.ids, guard=guard(expected={"rev": "someone else"}, data={"rev": 2})
            )
        assert await _state(memory) == before

    async def test_the_guard_compares_the_expected_value(self, memory: FullMemoryService) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory)
        await memory.save_metadata(NS, "s", {"rev": 1, "text": "old summary", "n": [1, 2]})
        snapshot = await memory.history_snapshot("s")
        expected = await memory.get_metadata(NS, "s")
        count = await memory.archive_exact(
            "s", snapshot.ids[:2], guard=guard(expected=expected, data={"rev": 2})
        )
        assert count == 2
        assert await memory.get_metadata(NS, "s") == {"rev": 2}

    async def test_two_commits_from_one_snapshot_only_the_first_lands(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory, count=6)
        snapshot = await memory.history_snapshot("s")
        await memory.archive_exact(
            "s", snapshot.ids[:4], guard=guard(data={"rev": "A"}), marker=marker("A", ts=35)
        )
        after_first = await _state(memory)
        # The second commit read the same (absent) entry and the same ids.
        with pytest.raises(ArchiveConflict):
            await memory.archive_exact(
                "s", snapshot.ids[:4], guard=guard(data={"rev": "B"}), marker=marker("B", ts=36)
            )
        assert await _state(memory) == after_first
        # Same guard reading but ids already archived: refused for the messages as well.
        with pytest.raises(ArchiveConflict) as caught:
            await memory.archive_exact(
                "s",
                snapshot.ids[:4],
                guard=guard(expected={"rev": "A"}, data={"rev": "C"}),
            )
        assert caught.value.reason == "messages"
        assert await _state(memory) == after_first

    async def test_concurrent_commits_from_one_snapshot_exactly_one_wins(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory, count=8)
        snapshot = await memory.history_snapshot("s")

        async def commit(name: str) -> int:
            return int(
                await memory.archive_exact(
                    "s",
                    snapshot.ids[:6],
                    guard=guard(data={"rev": name}),
                    marker=marker(name, ts=55),
                )
            )

        results = await asyncio.gather(
            commit("A"), commit("B"), commit("C"), return_exceptions=True
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        lost = [r for r in results if isinstance(r, BaseException)]
        assert won == [6]
        assert all(isinstance(r, ArchiveConflict) for r in lost)
        entry = await memory.get_metadata(NS, "s")
        assert entry is not None
        winner = entry["rev"]
        assert texts(await memory.get_history("s", INF)) == [winner, "m6", "m7"]

    async def test_a_clear_wins_over_a_commit_in_flight(self, memory: FullMemoryService) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory)
        snapshot = await memory.history_snapshot("s")
        await memory.clear_session("s")
        await memory.save_message("s", msg("after the clear", ts=50))
        with pytest.raises(ArchiveConflict) as caught:
            await memory.archive_exact("s", snapshot.ids, guard=guard(), marker=marker(ts=40))
        assert caught.value.reason == "messages"
        assert await memory.get_metadata(NS, "s") is None
        assert texts(await memory.get_history("s", INF)) == ["after the clear"]

    async def test_ids_are_never_given_to_a_later_message(self, memory: FullMemoryService) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        # The newest rows are deleted, then the same number of rows is saved again with the
        # same timestamps: a store that reuses row numbers must still tell them apart.
        await _fill(memory, session_id="s", count=3)
        snapshot = await memory.history_snapshot("s")
        await memory.clear_session("s")
        for i in range(3):
            await memory.save_message("s", msg(f"again {i}", ts=i * 10))
        fresh = await memory.history_snapshot("s")
        assert not set(fresh.ids) & set(snapshot.ids)
        with pytest.raises(ArchiveConflict):
            await memory.archive_exact("s", snapshot.ids, guard=guard())
        assert len(await memory.get_history("s", INF)) == 3

    async def test_ids_of_another_session_are_a_conflict(self, memory: FullMemoryService) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory, session_id="a")
        await _fill(memory, session_id="b")
        other = await memory.history_snapshot("b")
        before = await _state(memory, "a")
        with pytest.raises(ArchiveConflict):
            await memory.archive_exact("a", other.ids[:1], guard=guard(key="a"))
        with pytest.raises(ArchiveConflict):
            await memory.archive_exact("a", ["not an id of this store"], guard=guard(key="a"))
        assert await _state(memory, "a") == before
        assert len(await memory.get_history("b", INF)) == 4

    async def test_no_ids_still_checks_and_sets_the_guard(self, memory: FullMemoryService) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory, count=2)
        assert await memory.archive_exact("s", [], guard=guard(data={"rev": "x"})) == 0
        assert await memory.get_metadata(NS, "s") == {"rev": "x"}
        with pytest.raises(ArchiveConflict):
            await memory.archive_exact("s", [], guard=guard(data={"rev": "y"}))
        assert len(await memory.get_history("s", INF)) == 2

    async def test_bad_input_raises_before_anything_changes(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "history_snapshot", "archive_exact")
        await _fill(memory)
        snapshot = await memory.history_snapshot("s")
        before = await _state(memory)
        loose: Any = memory  # the calls below break the typed signature on purpose
        with pytest.raises(TypeError):
            await memory.archive_exact("s", snapshot.ids[0], guard=guard())  # a bare str
        with pytest.raises(TypeError):
            await loose.archive_exact("s", [1, 2], guard=guard())
        with pytest.raises(TypeError):
            await loose.archive_exact("s", snapshot.ids, guard={"namespace": NS})
        with pytest.raises((TypeError, ValueError)):
            await memory.archive_exact(
                "s",
                snapshot.ids,
                guard=guard(data={"bad": {1, 2}}),
            )
        with pytest.raises(TypeError):
            await loose.archive_exact("s", snapshot.ids, guard=guard(), marker="divider")
        with pytest.raises(TypeError):
            await loose.history_snapshot(7)
        assert await _state(memory) == before


__all__ = ["ExactArchiveConformance"]
