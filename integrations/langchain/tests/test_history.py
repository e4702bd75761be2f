"""AalisChatMessageHistory on real memory providers (memory-sqlite and memory-inmemory).

``langchain-tests`` ships no chat-history suite, so the first block ports what LangChain's
own chat-history tests assert (add/read in order, the convenience adders, bulk adds, async
variants, clear, isolation between sessions); then the Aalis-specific guarantees: lossless
mapping both ways, clears through run_clear, saves announced with distinct timestamps.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import BridgeDeadlock, SyncHost
from aalis_api_memory import ClearRequest, MessageIdConflict, Person, memory, person_of
from aalis_api_memory_conformance._support import without_ids
from aalis_langchain import (
    LANGCHAIN_KEY,
    AalisChatMessageHistory,
    ClearFailed,
    from_aalis,
    to_aalis,
)
from aalis_schema_message import Message, ToolCall
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from aalis_core import Host, Plugin, hookimpl, hookspec

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PROVIDERS = ["memory-sqlite", "memory-inmemory"]


class SavedSpec:
    """``memory_messages_saved`` as the memory contract declares it (declared here too, so
    these tests hold whether or not the installed contract has it yet)."""

    @hookspec
    def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None: ...


class Recorder(Plugin):
    """Records clear requests (as a middleware) and saved-message announcements."""

    name = "test-recorder"

    def __init__(self) -> None:
        self.clears: list[ClearRequest] = []
        self.saved: list[tuple[str, list[Message]]] = []

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
        self.clears.append(request)
        await call_next()

    @hookimpl
    def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None:
        self.saved.append((session_id, list(messages)))


def _config(tmp_path: Path, provider: str) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": ["memory-mongodb", "llm-openai"]},
        "capabilities": {"memory": {"provider": provider}},
    }


def _spec_kwargs() -> dict[str, Any]:
    try:
        import aalis_api_memory._hookspecs as specs

        if hasattr(specs, "memory_messages_saved"):
            return {}
    except ImportError:  # pragma: no cover
        pass
    return {"hookspecs": [SavedSpec]}


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def aalis(tmp_path: Path, provider: str, recorder: Recorder) -> Iterator[SyncHost]:
    with SyncHost(_config(tmp_path, provider), [recorder], **_spec_kwargs()) as host:
        assert host.host.providers(memory)[0] == provider or provider in host.host.providers(memory)
        yield host


def _history(aalis: SyncHost, session: str = "s1") -> AalisChatMessageHistory:
    return AalisChatMessageHistory(session, aalis)


def _named(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` as read, with the id each got from the store taken away (for comparing
    with messages built without one); every message read must have one."""
    assert all(isinstance(m.id, str) and m.id for m in messages), messages
    return [m.model_copy(update={"id": None}) for m in messages]


# -- what LangChain's own chat-history tests assert --------------------------------------


def test_a_new_session_has_no_messages(aalis: SyncHost) -> None:
    assert _history(aalis).messages == []


def test_convenience_adders_store_in_order(aalis: SyncHost) -> None:
    history = _history(aalis)
    history.add_user_message("Hello")
    history.add_ai_message("Hi there")
    history.add_message(HumanMessage(content="How are you?"))
    assert _named(history.messages) == [
        HumanMessage(content="Hello"),
        AIMessage(content="Hi there"),
        HumanMessage(content="How are you?"),
    ]


def test_bulk_add_keeps_every_message_and_the_order(aalis: SyncHost) -> None:
    history = _history(aalis)
    batch = [
        HumanMessage(content=f"m{i}") if i % 2 else AIMessage(content=f"m{i}") for i in range(7)
    ]
    history.add_messages(batch)
    history.add_messages([HumanMessage(content="last")])
    assert _named(history.messages) == [*batch, HumanMessage(content="last")]


def test_a_second_history_object_sees_the_same_session(aalis: SyncHost) -> None:
    _history(aalis).add_user_message("persisted")
    first = _history(aalis).messages
    assert _named(first) == [HumanMessage(content="persisted")]
    assert _history(aalis).messages == first  # the same id, read by another object


def test_sessions_are_isolated(aalis: SyncHost) -> None:
    one, two = _history(aalis, "one"), _history(aalis, "two")
    one.add_user_message("for one")
    two.add_user_message("for two")
    assert _named(one.messages) == [HumanMessage(content="for one")]
    assert _named(two.messages) == [HumanMessage(content="for two")]


def test_clear_empties_only_that_session(aalis: SyncHost) -> None:
    one, two = _history(aalis, "one"), _history(aalis, "two")
    one.add_messages([HumanMessage(content="a"), AIMessage(content="b")])
    two.add_user_message("stays")
    one.clear()
    assert one.messages == []
    assert _named(two.messages) == [HumanMessage(content="stays")]
    one.add_user_message("after the clear")
    assert _named(one.messages) == [HumanMessage(content="after the clear")]


def test_async_variants_from_another_loop(aalis: SyncHost) -> None:
    history = _history(aalis)

    async def scenario() -> list[BaseMessage]:
        await history.aadd_messages([HumanMessage(content="q"), AIMessage(content="a")])
        first = await history.aget_messages()
        await history.aclear()
        assert await history.aget_messages() == []
        return first

    assert _named(asyncio.run(scenario())) == [HumanMessage(content="q"), AIMessage(content="a")]


async def test_async_methods_on_an_async_host(tmp_path: Path, provider: str) -> None:
    async with Host(_config(tmp_path, provider), **_spec_kwargs()) as host:
        history = AalisChatMessageHistory("s1", host)
        await history.aadd_messages([HumanMessage(content="q"), AIMessage(content="a")])
        assert _named(await history.aget_messages()) == [
            HumanMessage(content="q"),
            AIMessage(content="a"),
        ]
        # A blocking call here would wait for this very loop: refused with a clear error.
        with pytest.raises(BridgeDeadlock, match="async method"):
            _ = history.messages
        await history.aclear()
        assert await history.aget_messages() == []


def test_the_session_id_is_checked(aalis: SyncHost) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        AalisChatMessageHistory("", aalis)


# -- lossless mapping ---------------------------------------------------------------------

RICH: list[BaseMessage] = [
    SystemMessage(content="be brief", id="sys-1"),
    HumanMessage(
        content=[
            {"type": "text", "text": "what is in "},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
        id="u-1",
        name="alice",
        additional_kwargs={"client": {"x": 1}},
    ),
    AIMessage(
        content="",
        id="run-42",
        tool_calls=[
            {"id": "call_1", "name": "search", "args": {"q": "paris", "n": 3}, "type": "tool_call"}
        ],
        response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
        usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        additional_kwargs={"reasoning_content": "the user wants a search"},
    ),
    ToolMessage(
        content="Paris is the capital of France",
        tool_call_id="call_1",
        name="search",
        artifact={"hits": 3},
        status="success",
        id="tool-1",
    ),
    AIMessage(content="Paris.", id="run-43"),
    ChatMessage(role="critic", content="fine", id="c-1"),
    FunctionMessage(name="legacy", content="{}", id="f-1"),
]


def test_langchain_messages_come_back_equal(aalis: SyncHost) -> None:
    history = _history(aalis)
    history.add_messages(RICH)
    assert history.messages == RICH


def test_what_an_aalis_model_sees_of_langchain_messages(aalis: SyncHost) -> None:
    _history(aalis).add_messages(RICH)
    stored = aalis.history("s1")
    assert [m.role for m in stored] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "critic",
        "function",
    ]
    assert stored[1].content == "what is in "
    call = stored[2].tool_calls
    assert call is not None
    assert call[0].id == "call_1"
    assert call[0].name == "search"
    assert call[0].arguments == '{"q": "paris", "n": 3}'
    assert stored[2].reasoning_content == "the user wants a search"
    assert stored[3].tool_call_id == "call_1"
    assert stored[3].name == "search"
    assert all(m.metadata and m.metadata["platform"] == "langchain" for m in stored)
    # Distinct timestamps: messages are deleted and indexed by them.
    stamps = [m.timestamp for m in stored]
    assert len(set(stamps)) == len(stamps)


def test_a_rewrite_on_the_aalis_side_shows_in_langchain(aalis: SyncHost) -> None:
    history = _history(aalis)
    history.add_messages([HumanMessage(content="I live in Lyon", id="u1")])
    assert aalis.memory.update_message_content("s1", "Lyon", "Nice") == 1
    assert history.messages == [HumanMessage(content="I live in Nice", id="u1")]


def test_aalis_messages_come_back_equal_after_langchain(aalis: SyncHost) -> None:
    saved = [
        Message(role="user", content="hi", timestamp=1000, metadata={"platform": "cli"}),
        Message(
            role="assistant",
            content=None,
            timestamp=1001,
            tool_calls=(ToolCall(id="c1", name="f", arguments='{"a":1}'),),
            reasoning_content="think",
            metadata={"model": "m"},
        ),
        Message(role="tool", content="42", tool_call_id="c1", name="f", timestamp=1002),
        Message(role="notice", content="a notice", kind="info", timestamp=1003),
        Message(
            role="assistant",
            content="bad args",
            timestamp=1004,
            tool_calls=(ToolCall(id="c2", name="g", arguments="not json"),),
        ),
    ]
    for message in saved:
        aalis.memory.save_message("aalis-side", message)
    seen = _history(aalis, "aalis-side").messages
    assert isinstance(seen[0], HumanMessage)
    assert seen[0].content == "hi"
    assert isinstance(seen[1], AIMessage)
    assert seen[1].tool_calls[0]["args"] == {"a": 1}
    assert isinstance(seen[2], ToolMessage)
    assert seen[2].tool_call_id == "c1"
    assert isinstance(seen[4], AIMessage)
    assert seen[4].invalid_tool_calls[0]["args"] == "not json"
    # Each LangChain message carries the Aalis id of the message it shows.
    assert [m.id for m in seen] == [m.id for m in aalis.history("aalis-side")]
    # Added again, they are the same messages: refused whole, not stored twice.
    with pytest.raises(MessageIdConflict):
        _history(aalis, "copy").add_messages(seen)
    assert aalis.history("copy") == []
    # Copied into a new session as new messages (no id): the Aalis messages are unchanged.
    _history(aalis, "copy").add_messages(_named(seen))
    copy, original = aalis.history("copy"), aalis.history("aalis-side")
    assert without_ids(copy) == without_ids(original)
    assert not {m.id for m in copy} & {m.id for m in original}


def test_control_markers_are_not_shown(aalis: SyncHost) -> None:
    aalis.memory.save_message("s1", Message(role="user", content="a", timestamp=1))
    aalis.memory.save_message(
        "s1", Message(role="system", content="-- divider --", kind="event-marker", timestamp=2)
    )
    assert _history(aalis).messages == [from_aalis(aalis.history("s1")[0])]


def test_non_json_content_is_refused_before_anything_is_saved(aalis: SyncHost) -> None:
    history = _history(aalis)
    bad = HumanMessage(content="x", additional_kwargs={"blob": {1, 2}})
    with pytest.raises(TypeError):
        history.add_messages([HumanMessage(content="fine"), bad])
    assert history.messages == []


def test_to_aalis_refuses_what_is_not_a_message() -> None:
    with pytest.raises(TypeError, match="BaseMessage"):
        to_aalis("hello")  # type: ignore[arg-type]


def test_the_langchain_form_is_kept_under_its_key(aalis: SyncHost) -> None:
    _history(aalis).add_messages([AIMessage(content="x", id="r1")])
    (stored,) = aalis.history("s1")
    assert stored.metadata is not None
    # The LangChain id is the Aalis id (kept once, in Message.id) ...
    assert stored.id == "r1"
    assert "id" not in stored.metadata[LANGCHAIN_KEY]["data"]
    assert "content" not in stored.metadata[LANGCHAIN_KEY]["data"]
    # ... and comes back as the LangChain id.
    assert _history(aalis).messages == [AIMessage(content="x", id="r1")]


def test_an_id_aalis_cannot_keep_is_left_in_the_langchain_form(aalis: SyncHost) -> None:
    odd = " padded id "
    _history(aalis).add_messages([HumanMessage(content="x", id=odd)])
    (stored,) = aalis.history("s1")
    assert stored.id is not None
    assert stored.id != odd
    assert stored.metadata is not None
    assert stored.metadata[LANGCHAIN_KEY]["data"]["id"] == odd


# -- clearing and announcements -----------------------------------------------------------


def test_clear_goes_through_run_clear(aalis: SyncHost, recorder: Recorder) -> None:
    history = _history(aalis)
    history.add_user_message("x")
    rows = history.clear_rows()
    (request,) = recorder.clears
    assert request.scope == "session"
    assert request.session_id == "s1"
    assert request.types is None
    assert any(row.type == "context" and row.success for row in rows)


def test_a_failed_clear_raises(tmp_path: Path) -> None:
    class Broken(Plugin):
        name = "test-broken-clear"

        @hookimpl
        async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
            return  # short-circuits: the history is never cleared

    with SyncHost(_config(tmp_path, "memory-inmemory"), [Broken()]) as aalis:
        history = _history(aalis)
        history.add_user_message("kept")
        with pytest.raises(ClearFailed, match="not cleared"):
            history.clear()
        assert _named(history.messages) == [HumanMessage(content="kept")]


def test_saves_are_announced_as_stored(aalis: SyncHost, recorder: Recorder) -> None:
    _history(aalis).add_messages([HumanMessage(content="q"), AIMessage(content="a")])
    ((session, messages),) = recorder.saved
    assert session == "s1"
    assert messages == aalis.history("s1")


def test_reads_are_bounded_by_limit(aalis: SyncHost) -> None:
    _history(aalis).add_messages([HumanMessage(content=str(i)) for i in range(5)])
    limited = AalisChatMessageHistory("s1", aalis, limit=2)
    assert [m.content for m in limited.messages] == ["3", "4"]
    assert math.isinf(_history(aalis).limit)


async def test_sync_calls_from_a_worker_thread_of_an_async_host(
    tmp_path: Path, provider: str
) -> None:
    """LangChain runs sync callbacks in executor threads: built inside the host's loop, the
    history hands them to that loop."""
    async with Host(_config(tmp_path, provider), **_spec_kwargs()) as host:
        history = AalisChatMessageHistory("s1", host)
        await asyncio.to_thread(history.add_messages, [HumanMessage(content="from a thread")])
        seen = await asyncio.to_thread(lambda: history.messages)
        assert _named(seen) == [HumanMessage(content="from a thread")]


# -- who speaks ---------------------------------------------------------------------------


def test_user_messages_carry_the_person_of_the_history(aalis: SyncHost) -> None:
    history = AalisChatMessageHistory("s1", aalis, user_id="alice")
    history.add_messages([HumanMessage(content="hi"), AIMessage(content="hello")])
    user, reply = aalis.history("s1")
    assert person_of(user) == Person("langchain", "alice")
    assert reply.metadata is not None
    assert "user_id" not in reply.metadata
    assert person_of(reply) is None
    # LangChain reads back what it wrote, the stamp stays on the Aalis side.
    assert _named(history.messages) == [HumanMessage(content="hi"), AIMessage(content="hello")]
    # A message that already names its speaker (it came from Aalis) keeps it.
    aalis.memory.save_message(
        "s2", Message(role="user", content="hi", metadata={"platform": "cli", "user_id": "carol"})
    )
    copied = AalisChatMessageHistory("s3", aalis, user_id="bob")
    # Copies (ids dropped: the originals still hold theirs in this store).
    copied.add_messages(
        [m.model_copy(update={"id": None}) for m in AalisChatMessageHistory("s2", aalis).messages]
    )
    assert person_of(aalis.history("s3")[0]) == Person("cli", "carol")


def test_a_user_id_without_a_platform_is_refused(aalis: SyncHost) -> None:
    with pytest.raises(ValueError, match="platform"):
        AalisChatMessageHistory("s1", aalis, platform=None, user_id="alice")
    with pytest.raises(ValueError, match="user_id"):
        AalisChatMessageHistory("s1", aalis, user_id="")
    _history(aalis).add_user_message("no one in particular")
    assert person_of(aalis.history("s1")[0]) is None  # no user_id given: none is invented
