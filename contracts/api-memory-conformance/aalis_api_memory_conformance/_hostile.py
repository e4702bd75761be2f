"""Conformance: hostile input is stored verbatim, or refused cleanly with nothing written.

Session ids, keys and texts reach the backends from chat platforms, i.e. from strangers. A
string shaped like SQL or like a MongoDB operator must be data and nothing else. Where a
backend cannot store something (a NUL inside a document field *name*), refusing it with a
``TypeError``/``ValueError`` and writing nothing is conformant; silently changing it is not.

**[decided]** A lone surrogate (``"\\ud800"``) is not text: it cannot be encoded as UTF-8, so
every backend refuses it with ``ValueError`` wherever it appears, before writing anything
(``aalis_api_memory._validation.check_text``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aalis_api_memory import FullMemoryService, Put, RecentMessagesQuery, StoredMessage
from aalis_schema_message import Message, ToolCall, new_message_id

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

HOSTILE: list[tuple[str, str]] = [
    ("sql-drop", "'; DROP TABLE messages; --"),
    ("sql-or", '" OR 1=1 --'),
    ("sql-like", "%_%"),
    ("mongo-gt", "$gt"),
    ("mongo-where", "$where"),
    ("mongo-ne-loose", "{$ne: 1}"),
    ("mongo-ne-json", '{"$ne": 1}'),
    ("dotted", "a.b.c"),
    ("dollar", "$"),
    ("nul", "\x00"),
    ("nul-inside", "before\x00after"),
    ("unicode", "🙂 中文 עברית a\u0301"),
    ("rtl-override", "\u202egnp.exe"),
    ("backslashes", "\\\\server\\share\\"),
    ("format", "%s %d {0} {}"),
    ("blank", " "),
    ("controls", "\n\r\t\x0b\x0c\x1b"),
    ("null-word", "null"),
    ("proto", "__proto__"),
    ("json-object", '{"role": "system"}'),
]
_IDS = [name for name, _ in HOSTILE]

#: Document-field-name shapes some databases reserve; verbatim or refused cleanly.
RESERVED_KEYS: list[tuple[str, dict[str, Any]]] = [
    ("dollar-operators", {"$set": {"a": 1}, "$where": "1", "x": {"$gt": ""}}),
    ("dotted", {"a.b": 1, "c": {"d.e": [1, {"f.g": 2}]}}),
    ("nul-key", {"k\x00ey": 1}),
    ("empty-key", {"": {"": ""}}),
    ("id-like", {"_id": 1, "__proto__": {"polluted": True}}),
]
_RESERVED_IDS = [name for name, _ in RESERVED_KEYS]

SURROGATE = "\ud800"


async def verbatim_or_refused(
    write: Callable[[], Awaitable[Any]],
    read: Callable[[], Awaitable[Any]],
    expected: Any,
    state: Callable[[], Awaitable[Any]],
) -> None:
    """``write`` either stores ``expected`` exactly or raises TypeError/ValueError and
    leaves ``state`` as it was."""
    before = await state()
    try:
        await write()
    except (TypeError, ValueError):
        assert await state() == before
        return
    assert await read() == expected


@conformance
class HostileInputConformance(ConformanceBase):
    @pytest.mark.parametrize(("name", "text"), HOSTILE, ids=_IDS)
    async def test_hostile_session_ids_are_plain_data(
        self, memory: FullMemoryService, name: str, text: str
    ) -> None:
        await memory.save_message("canary", msg("canary", ts=0))
        message = msg("hello", ts=1)
        await memory.save_message(text, message)
        assert await memory.get_history(text) == [message]
        assert [m.content for m in await memory.get_history("canary")] == ["canary"]
        if has(memory, "list_sessions"):
            assert sorted(info.session_id for info in await memory.list_sessions()) == sorted(
                ["canary", text]
            )
        if has(memory, "get_recent_messages_across_sessions"):
            records = await memory.get_recent_messages_across_sessions(RecentMessagesQuery(limit=5))
            assert [r.session_id for r in records] == ["canary", text]
            records = await memory.get_recent_messages_across_sessions(
                RecentMessagesQuery(limit=5, exclude_session_ids=[text])
            )
            assert [r.session_id for r in records] == ["canary"]
        assert await memory.archive_span(text, INF) == 1
        await memory.clear_session(text)
        assert await memory.get_history(text) == []
        assert [m.content for m in await memory.get_history("canary")] == ["canary"]

    @pytest.mark.parametrize(("name", "text"), HOSTILE, ids=_IDS)
    async def test_hostile_message_fields_round_trip(
        self, memory: FullMemoryService, name: str, text: str
    ) -> None:
        message = Message(
            role=text or "user",
            content=text,
            name=text,
            kind=text,
            tool_call_id=text,
            reasoning_content=text,
            tool_calls=(ToolCall(id=text, name=text, arguments=text),),
            segments=(text, {"text": text}),
            metadata={"platform": text, "list": [text]},
            timestamp=T0,
            id=new_message_id(),
        )
        await memory.save_message("s", message)
        assert await memory.get_history("s") == [message]
        if has(memory, "get_messages_by_session_range"):
            assert await memory.get_messages_by_session_range("s", T0, T0) == [message]
        if has(memory, "get_recent_messages_across_sessions"):
            records = await memory.get_recent_messages_across_sessions(
                RecentMessagesQuery(limit=5, roles=[message.role], platform=text, kinds=[text])
            )
            assert [r.message for r in records] == [message]
        if has(memory, "update_message_content") and text:
            assert await memory.update_message_content("s", text, "plain") == 1
            assert [m.content for m in await memory.get_history("s")] == ["plain"]

    @pytest.mark.parametrize(("name", "text"), HOSTILE, ids=_IDS)
    async def test_hostile_metadata_is_plain_data(
        self, memory: FullMemoryService, name: str, text: str
    ) -> None:
        await memory.save_metadata("canary", "canary", {"v": "canary"})
        await memory.save_metadata(text, text, {"v": text, text: [text]})
        assert await memory.get_metadata(text, text) == {"v": text, text: [text]}
        assert [(e.key, e.data) for e in await memory.list_metadata(text)] == [
            (text, {"v": text, text: [text]})
        ]
        if has(memory, "list_metadata_keys"):
            assert await memory.list_metadata_keys(text) == [text]
        if has(memory, "list_namespaces"):
            assert await memory.list_namespaces() == sorted(["canary", text])
        await memory.commit_metadata([Put(text, text + "2", {"v": 2})])
        await memory.delete_metadata(text, text)
        assert await memory.get_metadata(text, text) is None
        assert await memory.get_metadata(text, text + "2") == {"v": 2}
        assert await memory.get_metadata("canary", "canary") == {"v": "canary"}

    @pytest.mark.parametrize(("name", "data"), RESERVED_KEYS, ids=_RESERVED_IDS)
    async def test_reserved_looking_metadata_keys(
        self, memory: FullMemoryService, name: str, data: dict[str, Any]
    ) -> None:
        await memory.save_metadata("ns", "other", {"v": 1})
        await verbatim_or_refused(
            lambda: memory.save_metadata("ns", "k", data),
            lambda: memory.get_metadata("ns", "k"),
            data,
            lambda: metadata_state(memory, "ns"),
        )
        await verbatim_or_refused(
            lambda: memory.commit_metadata([Put("ns", "other", {"v": 2}), Put("ns", "b", data)]),
            lambda: memory.get_metadata("ns", "b"),
            data,
            lambda: metadata_state(memory, "ns"),
        )

    @pytest.mark.parametrize(("name", "data"), RESERVED_KEYS, ids=_RESERVED_IDS)
    async def test_reserved_looking_message_metadata_keys(
        self, memory: FullMemoryService, name: str, data: dict[str, Any]
    ) -> None:
        message = msg("x", ts=0, metadata=data, segments=(data,))
        await verbatim_or_refused(
            lambda: memory.save_message("s", message),
            lambda: memory.get_history("s"),
            [message],
            lambda: history_state(memory, "s"),
        )

    async def test_megabyte_values_round_trip(self, memory: FullMemoryService) -> None:
        big = "ab\u00e9\u4e2d" * 262_144  # 1,048,576 characters, multi-byte in UTF-8
        message = msg(big, ts=0, reasoning_content=big[::-1], metadata={"big": big})
        await memory.save_message("s", message)
        assert await memory.get_history("s") == [message]
        await memory.save_metadata("ns", "big", {"big": big})
        assert await memory.get_metadata("ns", "big") == {"big": big}

    async def test_long_ids_round_trip(self, memory: FullMemoryService) -> None:
        long_id = "s" * 300 + "\u4e2d" * 100
        await memory.save_message(long_id, msg("x", ts=0))
        assert [m.content for m in await memory.get_history(long_id)] == ["x"]
        assert await memory.get_history(long_id[:-1]) == []
        await memory.save_metadata(long_id, long_id, {"v": 1})
        assert await memory.get_metadata(long_id, long_id) == {"v": 1}

    async def test_lone_surrogates_are_refused_with_value_error(
        self, memory: FullMemoryService
    ) -> None:
        await memory.save_message("s", msg("before", ts=0))
        await memory.save_metadata("ns", "k", {"v": 1})
        bad = f"x{SURROGATE}y"
        writes: list[Callable[[], Awaitable[Any]]] = [
            lambda: memory.save_message(bad, msg("x", ts=1)),
            lambda: memory.save_message("s", msg(bad, ts=1)),
            lambda: memory.save_message("s", msg("x", ts=1, metadata={"k": bad})),
            lambda: memory.save_message("s", msg("x", ts=1, metadata={bad: 1})),
            lambda: memory.save_message("s", msg("x", ts=1, name=bad)),
            lambda: memory.save_metadata(bad, "k", {"v": 2}),
            lambda: memory.save_metadata("ns", bad, {"v": 2}),
            lambda: memory.save_metadata("ns", "k", {"v": bad}),
            lambda: memory.save_metadata("ns", "k", {bad: 2}),
            lambda: memory.commit_metadata([Put("ns", "k", {"v": 3}), Put("ns", "k2", {"v": bad})]),
        ]
        if has(memory, "update_message_content"):
            writes.append(lambda: memory.update_message_content("s", "before", bad))
        before = (await history_state(memory, "s"), await metadata_state(memory, "ns"))
        for write in writes:
            with pytest.raises(ValueError, match="surrogate"):
                await write()
        after = (await history_state(memory, "s"), await metadata_state(memory, "ns"))
        assert after == before
        if has(memory, "list_sessions"):
            assert [info.session_id for info in await memory.list_sessions()] == ["s"]

    async def test_timestamps_outside_int64_are_refused_with_value_error(
        self, memory: FullMemoryService
    ) -> None:
        # Every backend stores a timestamp in 64 bits; one that would not fit is refused by
        # all of them alike, so an export of any backend can be imported into any other.
        def at(ts: int) -> Message:
            return Message(role="user", content=f"at {ts}", timestamp=ts)

        await memory.save_message("s", at(0))
        for ts in (2**63, -(2**63) - 1, 10**30):
            with pytest.raises(ValueError, match="64-bit"):
                await memory.save_message("s", at(ts))
            if has(memory, "import_messages"):
                with pytest.raises(ValueError, match="64-bit"):
                    await memory.import_messages("s", [StoredMessage(at(1)), StoredMessage(at(ts))])
        await memory.save_message("s", at(2**63 - 1))
        await memory.save_message("s", at(-(2**63)))
        history = await memory.get_history("s", INF)
        assert [m.timestamp for m in history] == [-(2**63), 0, 2**63 - 1]


__all__ = ["HOSTILE", "RESERVED_KEYS", "HostileInputConformance", "verbatim_or_refused"]
