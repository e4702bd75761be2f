"""AalisChatStore on real memory providers.

LlamaIndex ships no standard chat-store suite; the first block ports what its own
SimpleChatStore tests assert (add/get, set, delete all/one/last, keys), then a
ChatMemoryBuffer on the store, then the Aalis guarantees (lossless mapping both ways, clears
through run_clear, deletions announced).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import SyncHost
from aalis_api_memory import ClearRequest, MessageIdConflict, Person, person_of
from aalis_api_memory_conformance._support import without_ids
from aalis_llamaindex import LLAMAINDEX_KEY, AalisChatStore, from_aalis
from aalis_schema_message import Message, ToolCall
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock
from llama_index.core.memory import ChatMemoryBuffer

from aalis_core import Host, Plugin, hookimpl

PROVIDERS = ["memory-sqlite", "memory-inmemory"]


class Recorder(Plugin):
    name = "test-recorder"

    def __init__(self) -> None:
        self.clears: list[ClearRequest] = []
        self.deleted: list[tuple[str, list[int]]] = []
        self.changed: list[str] = []

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
        self.clears.append(request)
        await call_next()

    @hookimpl
    def memory_messages_deleted(self, session_id: str, timestamps: Sequence[int]) -> None:
        self.deleted.append((session_id, list(timestamps)))

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.changed.append(session_id)


def _config(tmp_path: Path, provider: str) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": ["memory-mongodb", "llm-openai"]},
        "capabilities": {"memory": {"provider": provider}},
    }


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def aalis(tmp_path: Path, provider: str, recorder: Recorder) -> Iterator[SyncHost]:
    with SyncHost(_config(tmp_path, provider), [recorder]) as host:
        yield host


@pytest.fixture
def store(aalis: SyncHost) -> AalisChatStore:
    return AalisChatStore(aalis)


def _user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def _bot(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


# -- what LlamaIndex's own chat-store tests assert ----------------------------------------


def test_add_and_get(store: AalisChatStore) -> None:
    store.add_message("user1", _user("first"))
    store.add_message("user1", _bot("second"))
    assert store.get_messages("user1") == [_user("first"), _bot("second")]
    assert store.get_messages("nobody") == []


def test_set_replaces_the_conversation(store: AalisChatStore) -> None:
    store.add_message("user1", _user("old"))
    store.set_messages("user1", [_user("new"), _bot("reply")])
    assert store.get_messages("user1") == [_user("new"), _bot("reply")]


def test_delete_messages_returns_what_was_there(store: AalisChatStore) -> None:
    store.set_messages("user1", [_user("a"), _bot("b")])
    store.add_message("user2", _user("other"))
    assert store.delete_messages("user1") == [_user("a"), _bot("b")]
    assert store.get_messages("user1") == []
    assert store.get_messages("user2") == [_user("other")]


def test_delete_one_and_the_last(store: AalisChatStore, recorder: Recorder) -> None:
    store.set_messages("user1", [_user("a"), _bot("b"), _user("c"), _bot("d")])
    assert store.delete_message("user1", 1) == _bot("b")
    assert store.get_messages("user1") == [_user("a"), _user("c"), _bot("d")]
    assert store.delete_last_message("user1") == _bot("d")
    assert store.get_messages("user1") == [_user("a"), _user("c")]
    assert store.delete_message("user1", 5) is None
    assert store.get_messages("user1") == [_user("a"), _user("c")]
    assert [session for session, _ in recorder.deleted] == ["user1", "user1"]
    assert recorder.changed.count("user1") >= 2


def test_get_keys(store: AalisChatStore) -> None:
    store.add_message("k1", _user("x"))
    store.add_message("k2", _user("y"))
    assert sorted(store.get_keys()) == ["k1", "k2"]


async def test_async_variants(store: AalisChatStore) -> None:
    await store.async_add_message("a1", _user("q"))
    await store.aset_messages("a1", [_user("q2"), _bot("r2")])
    assert await store.aget_messages("a1") == [_user("q2"), _bot("r2")]
    assert await store.adelete_last_message("a1") == _bot("r2")
    assert await store.aget_keys() == ["a1"]
    assert await store.adelete_messages("a1") == [_user("q2")]
    assert await store.aget_messages("a1") == []


async def test_on_an_async_host(tmp_path: Path, provider: str) -> None:
    async with Host(_config(tmp_path, provider)) as host:
        store = AalisChatStore(host)
        await store.async_add_message("s", _user("hi"))
        assert await store.aget_messages("s") == [_user("hi")]


def test_bad_keys_are_refused(store: AalisChatStore) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        store.get_messages("")
    with pytest.raises(TypeError, match="ChatMessage"):
        store.add_message("k", "not a message")  # type: ignore[arg-type]
    assert store.get_keys() == []


# -- a LlamaIndex memory on the store -----------------------------------------------------


def test_chat_memory_buffer_persists_through_the_store(aalis: SyncHost) -> None:
    store = AalisChatStore(aalis)
    buffer = ChatMemoryBuffer.from_defaults(
        chat_store=store, chat_store_key="buffer", token_limit=10_000
    )
    buffer.put(_user("my name is Ada"))
    buffer.put(_bot("hello Ada"))
    again = ChatMemoryBuffer.from_defaults(
        chat_store=AalisChatStore(aalis), chat_store_key="buffer"
    )
    assert again.get() == [_user("my name is Ada"), _bot("hello Ada")]
    assert [(m.role, m.content) for m in aalis.history("buffer")] == [
        ("user", "my name is Ada"),
        ("assistant", "hello Ada"),
    ]
    again.reset()
    assert aalis.history("buffer") == []


# -- lossless mapping and clearing --------------------------------------------------------


def test_llamaindex_messages_come_back_equal(store: AalisChatStore, aalis: SyncHost) -> None:
    rich = [
        ChatMessage(role=MessageRole.SYSTEM, content="be brief"),
        ChatMessage(
            role=MessageRole.USER,
            blocks=[TextBlock(text="look at "), ImageBlock(url="https://example.org/cat.png")],
            additional_kwargs={"client": {"x": 1}},
        ),
        ChatMessage(
            role=MessageRole.ASSISTANT,
            content="",
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q": "cats"}'},
                    }
                ]
            },
        ),
        ChatMessage(
            role=MessageRole.TOOL,
            content="3 cats",
            additional_kwargs={"tool_call_id": "call_1", "name": "search"},
        ),
    ]
    store.set_messages("rich", rich)
    assert store.get_messages("rich") == rich
    stored = aalis.history("rich")
    assert stored[2].tool_calls == (
        ToolCall(id="call_1", name="search", arguments='{"q": "cats"}'),
    )
    assert stored[3].tool_call_id == "call_1"
    assert stored[3].name == "search"
    assert stored[1].content == "look at "
    assert LLAMAINDEX_KEY in (stored[0].metadata or {})


def test_a_rewrite_on_the_aalis_side_shows(store: AalisChatStore, aalis: SyncHost) -> None:
    store.add_message("s", _user("I live in Lyon"))
    assert aalis.memory.update_message_content("s", "Lyon", "Nice") == 1
    assert store.get_messages("s") == [_user("I live in Nice")]


def test_aalis_messages_come_back_equal(store: AalisChatStore, aalis: SyncHost) -> None:
    saved = [
        Message(role="user", content="hi", timestamp=10, metadata={"platform": "cli"}),
        Message(
            role="assistant",
            content=None,
            timestamp=11,
            tool_calls=(ToolCall(id="c1", name="f", arguments='{"a":1}'),),
        ),
        Message(role="tool", content="42", tool_call_id="c1", name="f", timestamp=12),
        Message(role="notice", content="a notice", timestamp=13),
    ]
    for message in saved:
        aalis.memory.save_message("aalis-side", message)
    seen = store.get_messages("aalis-side")
    stored = aalis.history("aalis-side")
    assert seen[0] == from_aalis(stored[0])
    # The Aalis id travels with the fields LlamaIndex has no place for.
    assert [m.additional_kwargs["aalis"]["id"] for m in seen] == [m.id for m in stored]
    assert without_ids(stored) == saved
    assert seen[1].additional_kwargs["tool_calls"][0]["function"]["name"] == "f"
    # The same messages in another session of the same store: refused (ids are unique).
    with pytest.raises(MessageIdConflict):
        store.set_messages("copy", seen)
    # As new messages (ids left out): the Aalis messages come back equal.
    for message in seen:
        del message.additional_kwargs["aalis"]["id"]
    store.set_messages("copy", seen)
    assert without_ids(aalis.history("copy")) == saved


def test_clears_go_through_run_clear(store: AalisChatStore, recorder: Recorder) -> None:
    store.add_message("s", _user("x"))
    store.delete_messages("s")
    (request,) = recorder.clears
    assert request.scope == "session"
    assert request.session_id == "s"
    assert request.types is None


# -- who speaks ---------------------------------------------------------------------------


def test_user_messages_carry_the_person_of_the_store(aalis: SyncHost) -> None:
    store = AalisChatStore(aalis, user_id="alice")
    store.add_message("s", _user("hi"))
    store.set_messages("t", [_user("new"), _bot("reply")])
    for key in ("s", "t"):
        assert person_of(aalis.history(key)[0]) == Person("llamaindex", "alice")
    reply = aalis.history("t")[1]
    assert reply.metadata is not None
    assert "user_id" not in reply.metadata
    assert store.get_messages("t") == [_user("new"), _bot("reply")]
    # An Aalis message that names its speaker keeps it when copied through the store.
    aalis.memory.save_message(
        "cli", Message(role="user", content="x", metadata={"platform": "cli", "user_id": "carol"})
    )
    copies = store.get_messages("cli")
    for copy in copies:  # the original keeps its id in this store: the copy takes a new one
        copy.additional_kwargs["aalis"].pop("id")
    store.set_messages("copy", copies)
    assert person_of(aalis.history("copy")[0]) == Person("cli", "carol")
    # Without a user_id nothing is invented.
    AalisChatStore(aalis).add_message("u", _user("anyone"))
    assert person_of(aalis.history("u")[0]) is None


def test_a_user_id_without_a_platform_is_refused(aalis: SyncHost) -> None:
    with pytest.raises(ValueError, match="platform"):
        AalisChatStore(aalis, platform=None, user_id="alice")
    with pytest.raises(ValueError, match="user_id"):
        AalisChatStore(aalis, user_id=" ")
