"""Conformance: bad limits and non-str ids raise before anything is read or written.

**[decided]** (docs/reference/memory-contract.md) a negative, fractional (``2.0``
included), NaN or bool limit raises ``ValueError``, a non-number ``TypeError``; a non-``str``
session id, namespace or key raises ``TypeError``. The checks below call every method with
each bad value and then compare the whole observable state with a snapshot taken before.
"""

from __future__ import annotations

import math
from typing import Any, cast

import pytest
from aalis_api_memory import FullMemoryService, StoredMessage
from aalis_schema_message import Message

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    T0,
    conformance,
    has,
    history_state,
    metadata_state,
    msg,
)

BAD_LIMIT_VALUES: list[tuple[str, Any, type[Exception]]] = [
    ("negative", -1, ValueError),
    ("negative-inf", -math.inf, ValueError),
    ("nan", math.nan, ValueError),
    ("true", True, ValueError),
    ("false", False, ValueError),
    ("whole-float", 2.0, ValueError),
    ("fraction", 1.5, ValueError),
    ("str", "5", TypeError),
    ("bytes", b"5", TypeError),
    ("list", [5], TypeError),
]

NON_STR_IDS: list[tuple[str, Any]] = [
    ("int", 1),
    ("none", None),
    ("bytes", b"s"),
    ("mongo-operator", {"$gt": ""}),
    ("list", ["s"]),
    ("float", 1.0),
]

_LIMIT_IDS = [name for name, _, _ in BAD_LIMIT_VALUES]
_ID_IDS = [name for name, _ in NON_STR_IDS]


async def _seed(memory: FullMemoryService) -> None:
    for i in range(6):
        await memory.save_message("s", msg(f"m{i}", ts=i))
    await memory.archive_span("s", 2)
    await memory.save_metadata("ns", "k", {"v": 1})


async def _state(memory: FullMemoryService, extra_sessions: tuple[str, ...] = ()) -> Any:
    sessions = {sid: await history_state(memory, sid) for sid in ("s", *extra_sessions)}
    listed = await memory.list_sessions() if has(memory, "list_sessions") else None
    namespaces = await memory.list_namespaces() if has(memory, "list_namespaces") else None
    return (sessions, await metadata_state(memory, "ns"), listed, namespaces)


@conformance
class BadInputConformance(ConformanceBase):
    @pytest.mark.parametrize(("name", "limit", "error"), BAD_LIMIT_VALUES, ids=_LIMIT_IDS)
    async def test_bad_limits_raise_before_anything_changes(
        self, memory: FullMemoryService, name: str, limit: Any, error: type[Exception]
    ) -> None:
        await _seed(memory)
        before = await _state(memory)
        with pytest.raises(error):
            await memory.get_history("s", limit)
        with pytest.raises(error):
            await memory.archive_span("s", limit)
        with pytest.raises(error):
            await memory.archive_span("s", limit, keep=[0])
        if has(memory, "get_full_history"):
            with pytest.raises(error):
                await memory.get_full_history("s", limit)
        if has(memory, "update_message_content"):
            with pytest.raises(error):
                await memory.update_message_content("s", "m", "X", recent_limit=limit)
        assert await _state(memory) == before

    async def test_zero_and_infinity_are_valid_limits(self, memory: FullMemoryService) -> None:
        await _seed(memory)
        assert await memory.get_history("s", 0) == []
        assert len(await memory.get_history("s", math.inf)) == 4
        assert len(await memory.get_history("s", float("inf"))) == 4
        if has(memory, "get_full_history"):
            assert await memory.get_full_history("s", 0) == []
            assert len(await memory.get_full_history("s", INF)) == 6

    @pytest.mark.parametrize(("name", "bad"), NON_STR_IDS, ids=_ID_IDS)
    async def test_non_str_session_ids_raise_type_error(
        self, memory: FullMemoryService, name: str, bad: Any
    ) -> None:
        await _seed(memory)
        before = await _state(memory, (str(bad), ""))
        calls: list[Any] = [
            lambda: memory.save_message(bad, msg("never", ts=9)),
            lambda: memory.get_history(bad),
            lambda: memory.archive_span(bad, INF),
            lambda: memory.clear_session(bad),
        ]
        optional = {
            "count_history": lambda: memory.count_history(bad),
            "get_full_history": lambda: memory.get_full_history(bad),
            "get_messages_by_session_range": lambda: memory.get_messages_by_session_range(
                bad, T0, T0 + 9
            ),
            "update_message_content": lambda: memory.update_message_content(bad, "m", "X"),
            "delete_messages_by_timestamps": lambda: memory.delete_messages_by_timestamps(
                bad, [T0]
            ),
            "export_session": lambda: memory.export_session(bad),
            "import_messages": lambda: memory.import_messages(
                bad, [StoredMessage(msg("never", ts=9))]
            ),
        }
        calls += [call for method, call in optional.items() if has(memory, method)]
        for call in calls:
            with pytest.raises(TypeError):
                await call()
        assert await _state(memory, (str(bad), "")) == before

    @pytest.mark.parametrize(("name", "bad"), NON_STR_IDS, ids=_ID_IDS)
    async def test_non_str_namespaces_and_keys_raise_type_error(
        self, memory: FullMemoryService, name: str, bad: Any
    ) -> None:
        await _seed(memory)
        before = await _state(memory)
        calls: list[Any] = [
            lambda: memory.save_metadata(bad, "k", {"v": 2}),
            lambda: memory.save_metadata("ns", bad, {"v": 2}),
            lambda: memory.get_metadata(bad, "k"),
            lambda: memory.get_metadata("ns", bad),
            lambda: memory.list_metadata(bad),
            lambda: memory.delete_metadata(bad, "k"),
            lambda: memory.delete_metadata("ns", bad),
        ]
        if has(memory, "list_metadata_keys"):
            calls.append(lambda: memory.list_metadata_keys(bad))
        for call in calls:
            with pytest.raises(TypeError):
                await call()
        assert await _state(memory) == before

    @pytest.mark.parametrize(
        "message",
        [{"role": "user", "content": "x"}, "hello", None, StoredMessage(Message(role="user"))],
        ids=["dict", "str", "none", "stored-message"],
    )
    async def test_save_refuses_what_is_not_a_message(
        self, memory: FullMemoryService, message: Any
    ) -> None:
        await _seed(memory)
        before = await _state(memory)
        with pytest.raises(TypeError):
            await memory.save_message("s", message)
        assert await _state(memory) == before

    async def test_archive_span_needs_a_count(self, memory: FullMemoryService) -> None:
        await _seed(memory)
        before = await _state(memory)
        with pytest.raises(TypeError):
            await cast(Any, memory).archive_span("s", None)
        assert await _state(memory) == before


__all__ = ["BAD_LIMIT_VALUES", "NON_STR_IDS", "BadInputConformance"]
