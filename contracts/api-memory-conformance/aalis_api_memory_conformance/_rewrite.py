"""Conformance: ``update_message_content`` and ``delete_messages_by_timestamps``."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from aalis_api_memory import FullMemoryService

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    T0,
    conformance,
    has,
    history_state,
    marker,
    msg,
    texts,
)

UPDATE = "update_message_content"
DELETE = "delete_messages_by_timestamps"


async def _everything(memory: FullMemoryService, session_id: str = "s") -> list[Any]:
    if has(memory, "get_full_history"):
        return list(await memory.get_full_history(session_id, INF))
    return list(await memory.get_history(session_id, INF))


@conformance
class UpdateContentConformance(ConformanceBase):
    async def test_replaces_literal_case_sensitive_occurrences(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, UPDATE)
        for i, content in enumerate(["a.b and a.b", "A.B", "axb", "(a.b)*"]):
            await memory.save_message("s", msg(content, ts=i))
        assert await memory.update_message_content("s", "a.b", "X") == 2
        assert texts(await memory.get_history("s")) == ["X and X", "A.B", "axb", "(X)*"]

    async def test_regex_and_format_characters_are_literal(self, memory: FullMemoryService) -> None:
        self.require(memory, UPDATE)
        await memory.save_message("s", msg(r"cost: $1.00 \d+ {0} %s .*", ts=0))
        assert await memory.update_message_content("s", ".*", r"\1") == 1
        assert await memory.update_message_content("s", "$1.00", "{x}") == 1
        assert texts(await memory.get_history("s")) == [r"cost: {x} \d+ {0} %s \1"]

    async def test_returns_messages_changed_not_occurrences(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, UPDATE)
        await memory.save_message("s", msg("x x x", ts=0))
        await memory.save_message("s", msg("y", ts=1))
        await memory.save_message("s", msg("x", ts=2))
        assert await memory.update_message_content("s", "x", "z") == 2
        assert await memory.update_message_content("s", "x", "z") == 0

    async def test_recent_limit_counts_the_full_history(self, memory: FullMemoryService) -> None:
        self.require(memory, UPDATE)
        for i in range(5):
            await memory.save_message("s", msg(f"old-{i}", ts=i))
        await memory.save_message("s", marker("old-marker", ts=5))
        await memory.archive_span("s", 3)  # old-0..old-2 archived but still in the full history
        assert await memory.update_message_content("s", "old", "new", recent_limit=5) == 5
        every = await _everything(memory)
        if has(memory, "get_full_history"):
            assert texts(every) == ["old-0", "new-1", "new-2", "new-3", "new-4", "new-marker"]
        assert texts(await memory.get_history("s", INF)) == ["new-3", "new-4", "new-marker"]

    async def test_default_recent_limit_is_100(self, memory: FullMemoryService) -> None:
        self.require(memory, UPDATE)
        for i in range(103):
            await memory.save_message("s", msg(f"v{i}", ts=i))
        assert await memory.update_message_content("s", "v", "w") == 100
        contents = texts(await memory.get_history("s", INF))
        assert contents[:3] == ["v0", "v1", "v2"]
        assert contents[3:] == [f"w{i}" for i in range(3, 103)]

    async def test_recent_limit_zero_and_infinity(self, memory: FullMemoryService) -> None:
        self.require(memory, UPDATE)
        for i in range(3):
            await memory.save_message("s", msg(f"v{i}", ts=i))
        assert await memory.update_message_content("s", "v", "w", recent_limit=0) == 0
        assert await memory.update_message_content("s", "v", "w", recent_limit=INF) == 3

    async def test_other_fields_timestamps_order_and_archive_flags_are_kept(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, UPDATE)
        saved = [
            msg("tie hello", ts=1, kind="reply", metadata={"platform": "qq"}, name="n"),
            msg("tie hello", role="assistant", ts=1, reasoning_content="hello"),
            msg("first hello", ts=0, segments=({"text": "hello"},)),
        ]
        for message in saved:
            await memory.save_message("s", message)
        await memory.archive_span("s", 1)
        before = await history_state(memory, "s")
        assert await memory.update_message_content("s", "hello", "bye") == 3

        def swap(message: Any) -> Any:
            return attrs.evolve(message, content=message.content.replace("hello", "bye"))

        # Only ``content`` changes (reasoning_content and segments keep their "hello").
        expected = [swap(saved[2]), swap(saved[0]), swap(saved[1])]
        active, full, exported = await history_state(memory, "s")
        assert active == expected[1:]
        if full is not None:
            assert full == expected
        if exported is not None:
            assert before[2] is not None  # exported now, so exported before too
            assert [r.archived for r in exported] == [r.archived for r in before[2]]
            assert [r.message for r in exported] == expected

    async def test_none_content_is_left_alone(self, memory: FullMemoryService) -> None:
        self.require(memory, UPDATE)
        await memory.save_message("s", msg(None, role="assistant", ts=0, reasoning_content="x"))
        await memory.save_message("s", msg("x", ts=1))
        assert await memory.update_message_content("s", "x", "y") == 1
        history = await memory.get_history("s")
        assert history[0].content is None
        assert history[0].reasoning_content == "x"

    async def test_only_the_named_session_changes(self, memory: FullMemoryService) -> None:
        self.require(memory, UPDATE)
        await memory.save_message("a", msg("same", ts=0))
        await memory.save_message("b", msg("same", ts=0))
        assert await memory.update_message_content("a", "same", "diff") == 1
        assert texts(await memory.get_history("b")) == ["same"]
        assert await memory.update_message_content("nobody", "same", "diff") == 0

    @pytest.mark.parametrize(
        ("args", "error"),
        [
            (("", "x"), ValueError),
            ((None, "x"), TypeError),
            (("x", None), TypeError),
            ((b"x", "y"), TypeError),
            (("x", "y", -1), ValueError),
            (("x", "y", 2.0), ValueError),
            (("x", "y", "3"), TypeError),
        ],
        ids=["empty-old", "none-old", "none-new", "bytes-old", "negative", "float", "str-limit"],
    )
    async def test_bad_arguments_raise_and_change_nothing(
        self, memory: FullMemoryService, args: tuple[Any, ...], error: type[Exception]
    ) -> None:
        self.require(memory, UPDATE)
        await memory.save_message("s", msg("x", ts=0))
        before = await history_state(memory, "s")
        with pytest.raises(error):
            await memory.update_message_content("s", *args)
        assert await history_state(memory, "s") == before


@conformance
class DeleteByTimestampConformance(ConformanceBase):
    async def test_deletes_listed_timestamps_archived_included(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, DELETE)
        for i in range(6):
            await memory.save_message("s", msg(f"m{i}", ts=i))
        await memory.archive_span("s", 3)
        assert await memory.delete_messages_by_timestamps("s", [T0 + 1, T0 + 4, T0 + 99]) == 2
        assert texts(await memory.get_history("s", INF)) == ["m3", "m5"]
        if has(memory, "get_full_history"):
            assert texts(await memory.get_full_history("s", INF)) == ["m0", "m2", "m3", "m5"]

    async def test_every_message_with_a_listed_timestamp_goes(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, DELETE)
        for i in range(3):
            await memory.save_message("s", msg(f"tie{i}", ts=5))
        await memory.save_message("s", marker("M", ts=5))
        await memory.save_message("s", msg("keep", ts=6))
        assert await memory.delete_messages_by_timestamps("s", (T0 + 5, T0 + 5)) == 4
        assert texts(await memory.get_history("s", INF)) == ["keep"]

    async def test_other_sessions_are_untouched(self, memory: FullMemoryService) -> None:
        self.require(memory, DELETE)
        await memory.save_message("a", msg("a", ts=0))
        await memory.save_message("b", msg("b", ts=0))
        assert await memory.delete_messages_by_timestamps("a", [T0]) == 1
        assert texts(await memory.get_history("b")) == ["b"]
        assert await memory.get_history("a") == []

    async def test_nothing_listed_or_nothing_matching_deletes_nothing(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, DELETE)
        await memory.save_message("s", msg("m", ts=0))
        assert await memory.delete_messages_by_timestamps("s", []) == 0
        assert await memory.delete_messages_by_timestamps("s", [T0 + 1]) == 0
        assert await memory.delete_messages_by_timestamps("nobody", [T0]) == 0
        assert texts(await memory.get_history("s")) == ["m"]

    async def test_timestamps_may_be_any_iterable(self, memory: FullMemoryService) -> None:
        self.require(memory, DELETE)
        for i in range(3):
            await memory.save_message("s", msg(f"m{i}", ts=i))
        # Wider than the typed Sequence[int]: every backend accepts any iterable of ints.
        loose: Any = memory
        assert await loose.delete_messages_by_timestamps("s", {T0, T0 + 2}) == 2
        assert await loose.delete_messages_by_timestamps("s", (t for t in [T0 + 1])) == 1

    @pytest.mark.parametrize(
        "timestamps",
        [str(T0), [str(T0)], [float(T0)], [None], T0, [True]],
        ids=["str", "str-item", "float-item", "none-item", "int", "bool-item"],
    )
    async def test_bad_timestamps_raise_and_change_nothing(
        self, memory: FullMemoryService, timestamps: Any
    ) -> None:
        self.require(memory, DELETE)
        await memory.save_message("s", msg("m", ts=0))
        await memory.save_message("s", msg("n", ts=1))
        before = await history_state(memory, "s")
        # A valid timestamp first: a backend must not delete it before seeing the bad one.
        listed = [T0 + 1, *timestamps] if isinstance(timestamps, list) else timestamps
        with pytest.raises(TypeError):
            await memory.delete_messages_by_timestamps("s", listed)
        assert await history_state(memory, "s") == before


__all__ = ["DeleteByTimestampConformance", "UpdateContentConformance"]
