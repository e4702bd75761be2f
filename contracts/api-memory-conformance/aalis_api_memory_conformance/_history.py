"""Conformance: saving, ordering, round-tripping and the read windows of the memory contract.

The rules: docs/reference/memory-contract.md.
"""

from __future__ import annotations

import attrs
import pytest
from aalis_api_memory import FullMemoryService
from aalis_schema_message import Message, ToolCall, new_message_id, now_ms

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    conformance,
    full_message,
    has,
    marker,
    message_window,
    msg,
    stamped,
    texts,
)

# M0 u1 M1 a1 M2 u2 M3: three conversation messages with markers around and between them.
_LAYOUT = ["M0", "u1", "M1", "a1", "M2", "u2", "M3"]


async def _save_layout(memory: FullMemoryService, session_id: str = "s") -> list[Message]:
    saved = []
    for offset, label in enumerate(_LAYOUT):
        if label.startswith("M"):
            message = marker(label, ts=offset)
        else:
            message = msg(label, role="user" if label[0] == "u" else "assistant", ts=offset)
        await memory.save_message(session_id, message)
        saved.append(message)
    return saved


@conformance
class HistoryConformance(ConformanceBase):
    """save_message, get_history, count_history, get_full_history."""

    # -- order ----------------------------------------------------------------------------

    async def test_messages_read_back_equal_and_in_order(self, memory: FullMemoryService) -> None:
        saved = [msg(f"m{i}", role="user" if i % 2 else "assistant", ts=i) for i in range(5)]
        for message in saved:
            await memory.save_message("s", message)
        assert await memory.get_history("s") == saved

    async def test_order_is_by_timestamp_not_by_arrival(self, memory: FullMemoryService) -> None:
        for content, ts in [("c", 30), ("a", 10), ("d", 40), ("b", 20)]:
            await memory.save_message("s", msg(content, ts=ts))
        assert texts(await memory.get_history("s")) == ["a", "b", "c", "d"]

    async def test_equal_timestamps_keep_insertion_order(self, memory: FullMemoryService) -> None:
        await memory.save_message("s", msg("late", ts=2))
        for i in range(5):
            await memory.save_message("s", msg(f"tie{i}", ts=1))
        await memory.save_message("s", msg("early", ts=0))
        expected = ["early", "tie0", "tie1", "tie2", "tie3", "tie4", "late"]
        assert texts(await memory.get_history("s")) == expected

    async def test_out_of_order_timestamps_with_ties_sort_stably(
        self, memory: FullMemoryService
    ) -> None:
        stamps = [5, 3, 5, 1, 3, 5, 0, 3, 9, 1]
        for index, ts in enumerate(stamps):
            await memory.save_message("s", msg(f"{ts}-{index}", ts=ts))
        expected = [f"{ts}-{i}" for i, ts in sorted(enumerate(stamps), key=lambda p: (p[1], p[0]))]
        assert texts(await memory.get_history("s", INF)) == expected

    # -- timestamps -----------------------------------------------------------------------

    async def test_save_without_timestamp_stores_now(self, memory: FullMemoryService) -> None:
        message = msg("now", ts=None)
        before = now_ms()
        await memory.save_message("s", message)
        after = now_ms()
        [stored] = await memory.get_history("s")
        assert isinstance(stored.timestamp, int)
        assert before <= stored.timestamp <= after
        assert stored == stamped(message, stored.timestamp)

    async def test_unstamped_message_sorts_after_older_stamped_ones(
        self, memory: FullMemoryService
    ) -> None:
        await memory.save_message("s", msg("past", ts=0))
        await memory.save_message("s", msg("present", ts=None))
        assert texts(await memory.get_history("s")) == ["past", "present"]

    async def test_given_timestamp_is_kept_exactly(self, memory: FullMemoryService) -> None:
        for timestamp in (0, 1, T_MAX_SAFE, -1_000):
            await memory.save_message(
                "s", Message(role="user", content=str(timestamp), timestamp=timestamp)
            )
        stored = await memory.get_history("s")
        assert [m.timestamp for m in stored] == [-1_000, 0, 1, T_MAX_SAFE]

    # -- no field is dropped --------------------------------------------------------------

    async def test_every_message_field_round_trips(self, memory: FullMemoryService) -> None:
        message = full_message()
        assert all(getattr(message, field.name) is not None for field in attrs.fields(Message))
        await memory.save_message("s", message)
        assert await memory.get_history("s") == [message]
        if has(memory, "get_full_history"):
            assert await memory.get_full_history("s") == [message]

    @pytest.mark.parametrize(
        "message",
        [
            Message(
                role="assistant",
                content=None,
                tool_calls=(ToolCall(id="c", name="f", arguments=""),),
            ),
            Message(role="tool", content="", tool_call_id="c", name="f"),
            Message(role="user", content="x", segments=(), images=(), audios=(), metadata={}),
            Message(role="custom-role", content="x", kind="custom-kind"),
            Message(role="user", content="x", metadata={"deep": [[[{"a": [1, {"b": 2}]}]]]}),
            Message(role="user", content="x", metadata={"n": 2**53, "f": 0.1, "neg": -1e-9}),
        ],
        ids=["tool-call-only", "empty-content", "empty-containers", "open-role", "deep", "numbers"],
    )
    async def test_edge_messages_round_trip(
        self, memory: FullMemoryService, message: Message
    ) -> None:
        message = stamped(message, 1_700_000_000_000).with_id(new_message_id())
        await memory.save_message("s", message)
        [stored] = await memory.get_history("s")
        assert stored == message
        # Absent stays absent and empty stays empty: None and "" / () / {} are different.
        for field in attrs.fields(Message):
            assert (getattr(stored, field.name) is None) == (getattr(message, field.name) is None)

    async def test_mutating_the_saved_message_afterwards_changes_nothing(
        self, memory: FullMemoryService
    ) -> None:
        message = msg("x", ts=0, metadata={"list": [1], "inner": {"a": 1}}, segments=({"t": 1},))
        await memory.save_message("s", message)
        assert message.metadata is not None
        assert message.segments is not None
        message.metadata["list"].append(2)
        message.metadata["inner"]["a"] = 99
        message.metadata["added"] = True
        message.segments[0]["t"] = 2
        [stored] = await memory.get_history("s")
        assert stored.metadata == {"list": [1], "inner": {"a": 1}}
        assert stored.segments == ({"t": 1},)

    async def test_mutating_a_returned_message_changes_nothing(
        self, memory: FullMemoryService
    ) -> None:
        await memory.save_message("s", msg("x", ts=0, metadata={"list": [1]}, audios=({"u": "a"},)))
        [first] = await memory.get_history("s")
        assert first.metadata is not None
        assert first.audios is not None
        first.metadata["list"].append(2)
        first.metadata["new"] = 1
        first.audios[0]["u"] = "changed"
        [again] = await memory.get_history("s")
        assert again.metadata == {"list": [1]}
        assert again.audios == ({"u": "a"},)

    # -- sessions -------------------------------------------------------------------------

    async def test_sessions_are_independent(self, memory: FullMemoryService) -> None:
        await memory.save_message("a", msg("for a", ts=0))
        await memory.save_message("b", msg("for b", ts=1))
        await memory.save_message("ab", msg("for ab", ts=2))
        assert texts(await memory.get_history("a")) == ["for a"]
        assert texts(await memory.get_history("b")) == ["for b"]
        assert texts(await memory.get_history("ab")) == ["for ab"]

    async def test_unknown_session_reads_empty(self, memory: FullMemoryService) -> None:
        assert await memory.get_history("nobody") == []
        if has(memory, "count_history"):
            assert await memory.count_history("nobody") == 0
        if has(memory, "get_full_history"):
            assert await memory.get_full_history("nobody") == []

    async def test_empty_string_is_a_valid_session_id(self, memory: FullMemoryService) -> None:
        await memory.save_message("", msg("empty id", ts=0))
        assert texts(await memory.get_history("")) == ["empty id"]
        assert await memory.get_history(" ") == []

    # -- the get_history window -----------------------------------------------------------

    @pytest.mark.parametrize(
        ("limit", "expected"),
        [
            (0, []),
            (1, ["M2", "u2", "M3"]),
            (2, ["M1", "a1", "M2", "u2", "M3"]),
            (3, _LAYOUT),
            (4, _LAYOUT),
            (INF, _LAYOUT),
            (None, _LAYOUT),
        ],
    )
    async def test_history_window_counts_conversation_messages_only(
        self, memory: FullMemoryService, limit: float | None, expected: list[str]
    ) -> None:
        # The result is every active message after the (limit+1)-th newest conversation
        # message, markers in between included; all of them when there are <= limit.
        await _save_layout(memory)
        assert texts(await memory.get_history("s", limit)) == expected

    async def test_history_of_markers_only(self, memory: FullMemoryService) -> None:
        for i in range(3):
            await memory.save_message("s", marker(f"M{i}", ts=i))
        assert texts(await memory.get_history("s", 1)) == ["M0", "M1", "M2"]
        assert texts(await memory.get_history("s")) == ["M0", "M1", "M2"]
        assert await memory.get_history("s", 0) == []

    async def test_kinds_outside_control_kinds_count_as_conversation(
        self, memory: FullMemoryService
    ) -> None:
        await memory.save_message("s", msg("a", ts=0, kind="reply"))
        await memory.save_message("s", msg("b", ts=1, kind="thought"))
        await memory.save_message("s", marker("M", ts=2))
        assert texts(await memory.get_history("s", 1)) == ["b", "M"]

    async def test_history_default_limit_is_50(self, memory: FullMemoryService) -> None:
        saved = []
        for i in range(64):
            message = marker(f"M{i}", ts=i) if i % 7 == 3 else msg(f"m{i}", ts=i)
            await memory.save_message("s", message)
            saved.append(message)
        history = await memory.get_history("s")
        assert history == message_window(saved, 50)
        assert sum(1 for m in history if not m.is_control) == 50

    async def test_history_excludes_archived_messages(self, memory: FullMemoryService) -> None:
        for i in range(4):
            await memory.save_message("s", msg(f"m{i}", ts=i))
        assert await memory.archive_span("s", 2) == 2
        assert texts(await memory.get_history("s")) == ["m2", "m3"]
        assert texts(await memory.get_history("s", 5)) == ["m2", "m3"]

    # -- count_history --------------------------------------------------------------------

    async def test_count_history_counts_active_conversation_messages(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "count_history")
        await _save_layout(memory)
        assert await memory.count_history("s") == 3
        await memory.archive_span("s", 2)  # M0 and u1
        assert await memory.count_history("s") == 2
        assert await memory.count_history("s") == len(
            [m for m in await memory.get_history("s", INF) if not m.is_control]
        )

    # -- get_full_history -----------------------------------------------------------------

    async def test_full_history_interleaves_archived_and_active(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "get_full_history")
        saved = await _save_layout(memory)
        await memory.archive_span("s", 5, keep=[1, 3])  # archives M0, M1, M2
        assert texts(await memory.get_history("s", INF)) == ["u1", "a1", "u2", "M3"]
        assert await memory.get_full_history("s", INF) == saved

    @pytest.mark.parametrize(
        ("limit", "expected"),
        [(0, []), (1, ["M3"]), (2, ["u2", "M3"]), (5, _LAYOUT[2:]), (7, _LAYOUT), (INF, _LAYOUT)],
    )
    async def test_full_history_limit_counts_markers(
        self, memory: FullMemoryService, limit: float, expected: list[str]
    ) -> None:
        self.require(memory, "get_full_history")
        await _save_layout(memory)
        await memory.archive_span("s", 2)
        assert texts(await memory.get_full_history("s", limit)) == expected

    async def test_full_history_default_limit_is_200(self, memory: FullMemoryService) -> None:
        self.require(memory, "get_full_history")
        for i in range(205):
            await memory.save_message("s", msg(f"m{i}", ts=i) if i % 10 else marker(f"M{i}", ts=i))
        await memory.archive_span("s", 100)
        full = await memory.get_full_history("s")
        assert len(full) == 200
        assert [m.timestamp for m in full] == [1_700_000_000_000 + i for i in range(5, 205)]


#: Largest integer a JSON number carries exactly in every common reader.
T_MAX_SAFE = 2**53 - 1

__all__ = ["HistoryConformance"]
