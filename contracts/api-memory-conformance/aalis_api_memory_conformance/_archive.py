"""Conformance: ``archive_span`` — positions, keep, counts, and what it returns.

The rules: docs/reference/memory-contract.md.
"""

from __future__ import annotations

from typing import Any

import pytest
from aalis_api_memory import FullMemoryService

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


async def _five(memory: FullMemoryService, session_id: str = "s") -> None:
    for i in range(5):
        await memory.save_message(session_id, msg(f"m{i}", ts=i))


async def _active(memory: FullMemoryService, session_id: str = "s") -> list[str | None]:
    return texts(await memory.get_history(session_id, INF))


@conformance
class ArchiveConformance(ConformanceBase):
    """archive_span archives the first ``count`` active positions except ``keep``."""

    async def test_archives_the_first_count_active_messages(
        self, memory: FullMemoryService
    ) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 2) == 2
        assert await _active(memory) == ["m2", "m3", "m4"]
        if has(memory, "get_full_history"):
            assert texts(await memory.get_full_history("s", INF)) == [f"m{i}" for i in range(5)]

    async def test_keep_positions_stay_active(self, memory: FullMemoryService) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 4, keep=[1, 3]) == 2
        assert await _active(memory) == ["m1", "m3", "m4"]

    async def test_keep_accepts_any_iterable_of_ints(self, memory: FullMemoryService) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 3, keep=(2,)) == 2
        assert await memory.archive_span("s", 1, keep=range(0)) == 1
        assert await _active(memory) == ["m3", "m4"]

    async def test_keep_outside_the_span_does_nothing(self, memory: FullMemoryService) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 2, keep=[2, 4, 99]) == 2
        assert await _active(memory) == ["m2", "m3", "m4"]

    async def test_keep_duplicates_count_once(self, memory: FullMemoryService) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 3, keep=[1, 1, 1]) == 2
        assert await _active(memory) == ["m1", "m3", "m4"]

    @pytest.mark.parametrize("keep", [(), (0, 1)])
    async def test_count_zero_archives_nothing(
        self, memory: FullMemoryService, keep: tuple[int, ...]
    ) -> None:
        await _five(memory)
        before = await history_state(memory, "s")
        assert await memory.archive_span("s", 0, keep=keep) == 0
        assert await history_state(memory, "s") == before

    async def test_count_past_the_end_takes_the_whole_active_list(
        self, memory: FullMemoryService
    ) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 99) == 5
        assert await memory.get_history("s", INF) == []

    async def test_count_past_the_end_with_keep(self, memory: FullMemoryService) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 6, keep=[0, 4, 5]) == 3
        assert await _active(memory) == ["m0", "m4"]

    async def test_count_infinity_takes_everything(self, memory: FullMemoryService) -> None:
        await _five(memory)
        assert await memory.archive_span("s", INF, keep=[2]) == 4
        assert await _active(memory) == ["m2"]

    async def test_markers_occupy_positions(self, memory: FullMemoryService) -> None:
        await memory.save_message("s", msg("u0", ts=0))
        await memory.save_message("s", marker("M", ts=1))
        await memory.save_message("s", msg("a1", role="assistant", ts=2))
        await memory.save_message("s", msg("u2", ts=3))
        assert await memory.archive_span("s", 2) == 2  # u0 and the marker
        assert await _active(memory) == ["a1", "u2"]

    async def test_keep_can_name_a_marker(self, memory: FullMemoryService) -> None:
        await memory.save_message("s", msg("u0", ts=0))
        await memory.save_message("s", marker("M", ts=1))
        await memory.save_message("s", msg("a1", role="assistant", ts=2))
        assert await memory.archive_span("s", 3, keep=[1]) == 2
        assert await _active(memory) == ["M"]

    async def test_positions_are_those_at_call_time(self, memory: FullMemoryService) -> None:
        await _five(memory)
        assert await memory.archive_span("s", 3, keep=[1]) == 2  # m0, m2
        assert await _active(memory) == ["m1", "m3", "m4"]
        assert await memory.archive_span("s", 1) == 1  # now position 0 is m1
        assert await _active(memory) == ["m3", "m4"]
        assert await memory.archive_span("s", 2, keep=[0]) == 1  # m4
        assert await _active(memory) == ["m3"]

    async def test_positions_follow_timestamp_order(self, memory: FullMemoryService) -> None:
        for content, ts in [("c", 3), ("a", 1), ("b", 2), ("tie-first", 4), ("tie-second", 4)]:
            await memory.save_message("s", msg(content, ts=ts))
        assert await memory.archive_span("s", 1) == 1
        assert await _active(memory) == ["b", "c", "tie-first", "tie-second"]
        assert await memory.archive_span("s", 3) == 3
        assert await _active(memory) == ["tie-second"]

    async def test_archived_messages_are_unchanged(self, memory: FullMemoryService) -> None:
        saved = [msg(f"m{i}", ts=i, metadata={"i": i}, kind="k") for i in range(3)]
        for message in saved:
            await memory.save_message("s", message)
        await memory.archive_span("s", 2)
        if has(memory, "get_full_history"):
            assert await memory.get_full_history("s", INF) == saved
        if has(memory, "export_session"):
            exported = await memory.export_session("s")
            assert [record.message for record in exported] == saved
            assert [record.archived for record in exported] == [True, True, False]

    async def test_already_archived_messages_are_not_counted_again(
        self, memory: FullMemoryService
    ) -> None:
        await _five(memory)
        assert await memory.archive_span("s", INF) == 5
        assert await memory.archive_span("s", INF) == 0
        assert await memory.archive_span("s", 3) == 0

    async def test_unknown_session_archives_nothing(self, memory: FullMemoryService) -> None:
        assert await memory.archive_span("nobody", 5) == 0

    async def test_only_the_named_session_is_archived(self, memory: FullMemoryService) -> None:
        await _five(memory, "a")
        await _five(memory, "b")
        assert await memory.archive_span("a", INF) == 5
        assert len(await memory.get_history("b", INF)) == 5

    @pytest.mark.parametrize(
        ("keep", "error"),
        [
            ([-1], ValueError),
            ([0, -5], ValueError),
            (["1"], TypeError),
            ([1.0], TypeError),
            ([True], TypeError),
            ([None], TypeError),
            ("01", TypeError),
            (3, TypeError),
            ({0: 1}, TypeError),
        ],
        ids=[
            "negative",
            "negative-later",
            "str-item",
            "float-item",
            "bool-item",
            "none-item",
            "str",
            "int",
            "mapping",
        ],
    )
    async def test_bad_keep_raises_and_changes_nothing(
        self, memory: FullMemoryService, keep: Any, error: type[Exception]
    ) -> None:
        await _five(memory)
        before = await history_state(memory, "s")
        with pytest.raises(error):
            await memory.archive_span("s", 3, keep=keep)
        assert await history_state(memory, "s") == before


__all__ = ["ArchiveConformance"]
