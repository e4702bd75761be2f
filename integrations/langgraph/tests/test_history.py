"""A graph's thread is its Aalis session's history: run LangGraph itself on ``AalisSaver``
with a scripted model, then the real ``aalis history``, ``aalis export`` and ``aalis clear``
on the same SQLite file.

Before the mirror, ``aalis history <thread>`` printed nothing and ``aalis clear --session``
left every checkpoint: the graph resumed the "cleared" conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import SyncHost
from aalis_langgraph import THREADS, AalisSaver, thread_namespace
from aalis_langgraph._messages import from_aalis
from click.testing import CliRunner
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from aalis_core import cli

PLUGINS = "memory-sqlite,memory-cli,langgraph"


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _graph(replies: list[AIMessage], saver: AalisSaver) -> Any:
    """An agent that may call a tool: LangGraph's own ToolNode and tools_condition."""
    model = GenericFakeChatModel(messages=iter(replies))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def _calling(city: str, call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "weather", "args": {"city": city}, "id": call_id}])


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    toml = tmp_path / "aalis.toml"
    toml.write_text(
        f'[host]\ndata_dir = "{(tmp_path / "data").as_posix()}"\nlog_level = "warning"\n\n'
        '[capabilities.memory]\nprovider = "memory-sqlite"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("AALIS_CONFIG", str(toml))
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", PLUGINS)
    return {
        "host": {"data_dir": str(tmp_path / "data"), "log_level": "warning"},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


def aalis(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def host(config: dict[str, Any]) -> Iterator[SyncHost]:
    with SyncHost(config) as started:
        yield started


THREAD = {"configurable": {"thread_id": "ada"}}


def test_the_thread_is_the_session_history_lossless(host: SyncHost) -> None:
    saver = AalisSaver(host)
    graph = _graph(
        [_calling("Paris", "call_1"), AIMessage("It is sunny in Paris."), AIMessage("Bye.")],
        saver,
    )
    graph.invoke({"messages": [HumanMessage("Weather in Paris?")]}, THREAD)
    out = graph.invoke({"messages": [HumanMessage("Thanks.")]}, THREAD)
    saver.flush()  # the copy is made behind the puts: read right after a run, flush first
    state = out["messages"]
    assert [type(m).__name__ for m in state] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "HumanMessage", "AIMessage"
    ]  # fmt: skip
    stored = host.memory.get_history("ada", None)
    # Each message once (only new ones were appended at each checkpoint), in order, under
    # the graph's own id, and rebuilt equal: tool calls, tool call id, metadata, ids.
    assert [m.id for m in stored] == [m.id for m in state]
    assert [from_aalis(m) for m in stored] == state
    assert stored[1].tool_calls is not None
    assert stored[1].tool_calls[0].id == "call_1"
    assert json.loads(stored[1].tool_calls[0].arguments) == {"city": "Paris"}
    assert stored[2].role == "tool"
    assert stored[2].tool_call_id == "call_1"
    assert isinstance(state[2], ToolMessage)
    assert stored[2].content == "sunny in Paris"
    assert all((m.metadata or {}).get("platform") == "langgraph" for m in stored)

    shown = json.loads(aalis("history", "ada", "--json"))
    assert [m["content"] for m in shown] == [
        "Weather in Paris?", "", "sunny in Paris", "It is sunny in Paris.", "Thanks.", "Bye."
    ]  # fmt: skip
    assert "Weather in Paris?" in aalis("history", "ada")


def test_removed_and_rewound_messages_leave_the_history(host: SyncHost) -> None:
    saver = AalisSaver(host)
    graph = _graph([AIMessage("One."), AIMessage("Two."), AIMessage("Other two.")], saver)
    graph.invoke({"messages": [HumanMessage("1")]}, THREAD)
    first = graph.get_state(THREAD).config
    graph.invoke({"messages": [HumanMessage("2")]}, THREAD)
    saver.flush()
    contents = [m.content for m in host.memory.get_history("ada", None)]
    assert contents == ["1", "One.", "2", "Two."]

    # RemoveMessage through LangGraph's own update_state: deleted from the history by id.
    doomed = graph.get_state(THREAD).values["messages"][1]
    graph.update_state(THREAD, {"messages": [RemoveMessage(id=doomed.id)]})
    saver.flush()
    assert [m.content for m in host.memory.get_history("ada", None)] == ["1", "2", "Two."]

    # A run from an older checkpoint: the abandoned branch leaves, the new one is appended.
    graph.invoke({"messages": [HumanMessage("2 again")]}, first)
    saver.flush()
    assert [m.content for m in host.memory.get_history("ada", None)] == [
        "1", "One.", "2 again", "Other two."
    ]  # fmt: skip
    assert [m.id for m in host.memory.get_history("ada", None)] == [
        m.id for m in graph.get_state(THREAD).values["messages"]
    ]


def test_aalis_clear_takes_the_history_and_the_checkpoints(
    config: dict[str, Any], tmp_path: Path
) -> None:
    with SyncHost(config) as host:
        graph = _graph([AIMessage("Hello Ada.")], AalisSaver(host))
        graph.invoke({"messages": [HumanMessage("I am Ada.")]}, THREAD)
        other = _graph([AIMessage("Hello Bob.")], AalisSaver(host))
        other.invoke(
            {"messages": [HumanMessage("I am Bob.")]}, {"configurable": {"thread_id": "bob"}}
        )

    aalis("export", "ada", "-o", str(tmp_path / "ada.jsonl"))
    lines = (tmp_path / "ada.jsonl").read_text(encoding="utf-8").splitlines()
    exported = [json.loads(line) for line in lines[1:]]
    assert [e["message"]["content"] for e in exported] == ["I am Ada.", "Hello Ada."]

    output = aalis("clear", "--session", "ada", "--yes")
    assert "LangGraph checkpoints cleared" in output, output
    assert json.loads(aalis("history", "ada", "--json")) == []

    with SyncHost(config) as host:
        store = host.memory
        assert store.list_metadata(thread_namespace("ada")) == []
        assert [e.key for e in store.list_metadata(THREADS)] == ["bob"]
        saver = AalisSaver(host)
        graph = _graph([AIMessage("Hello, who are you?")], saver)
        assert graph.get_state(THREAD).values == {}
        # The graph starts over, and so does the history: nothing of before comes back.
        graph.invoke({"messages": [HumanMessage("Hi.")]}, THREAD)
        saver.flush()
        assert [m.content for m in store.get_history("ada", None)] == [
            "Hi.", "Hello, who are you?"
        ]  # fmt: skip
        assert len(store.get_history("bob", None)) == 2  # the other thread is untouched


def test_copy_and_delete_thread_follow(host: SyncHost) -> None:
    saver = AalisSaver(host)
    graph = _graph([AIMessage("Hello.")], saver)
    graph.invoke({"messages": [HumanMessage("Hi.")]}, THREAD)
    saver.copy_thread("ada", "ada-copy")
    original = host.memory.get_history("ada", None)
    copied = host.memory.get_history("ada-copy", None)
    assert [m.content for m in copied] == ["Hi.", "Hello."]
    # Ids are unique in the store: the copies have their own.
    assert not {m.id for m in copied} & {m.id for m in original}

    saver.delete_thread("ada")
    assert host.memory.get_history("ada", None) == []
    assert host.memory.list_metadata(thread_namespace("ada")) == []
    assert [m.content for m in host.memory.get_history("ada-copy", None)] == ["Hi.", "Hello."]


def test_no_history_when_asked_not_to(host: SyncHost) -> None:
    graph = _graph([AIMessage("Hello.")], AalisSaver(host, messages=None))
    graph.invoke({"messages": [HumanMessage("Hi.")]}, THREAD)
    assert host.memory.get_history("ada", None) == []
    with pytest.raises(ValueError, match="messages must name a channel"):
        AalisSaver(host, messages="")


def test_a_channel_named_messages_that_holds_no_messages_is_left_alone(
    host: SyncHost, caplog: pytest.LogCaptureFixture
) -> None:
    from typing import TypedDict

    class State(TypedDict):
        messages: list[int]

    builder = StateGraph(State)
    builder.add_node("count", lambda state: {"messages": [*state["messages"], 1]})
    builder.add_edge(START, "count")
    saver = AalisSaver(host)
    graph = builder.compile(checkpointer=saver)
    with caplog.at_level("WARNING", logger="aalis_langgraph"):
        out = graph.invoke({"messages": [0]}, THREAD)
        saver.flush()
    assert out == {"messages": [0, 1]}
    assert host.memory.get_history("ada", None) == []
    assert "does not hold messages" in caplog.text


def test_a_message_aalis_cannot_store_fails_the_put_and_writes_nothing(host: SyncHost) -> None:
    # history_delay=0: the copy is made inside each put, so the put fails whole.
    saver = AalisSaver(host, history_delay=0)
    graph = _graph([AIMessage("Hello."), AIMessage("Never stored.")], saver)
    graph.invoke({"messages": [HumanMessage("Hi.")]}, THREAD)
    odd = HumanMessage("Bytes.", additional_kwargs={"blob": b"\x00\x01"})
    with pytest.raises(TypeError):
        graph.invoke({"messages": [odd]}, THREAD)
    assert [m.content for m in host.memory.get_history("ada", None)] == ["Hi.", "Hello."]
    # The checkpoint that would have held it was not written either.
    newest = saver.get_tuple(THREAD)
    assert newest is not None
    assert [m.content for m in newest.checkpoint["channel_values"]["messages"]] == [
        "Hi.", "Hello."
    ]  # fmt: skip


def test_a_clear_of_everything_takes_every_thread_and_other_types_take_none(
    config: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", PLUGINS + ",memory-summary")
    with SyncHost(config) as host:
        for thread in ("ada", "bob"):
            graph = _graph([AIMessage(f"Hello {thread}.")], AalisSaver(host))
            graph.invoke(
                {"messages": [HumanMessage("Hi.")]}, {"configurable": {"thread_id": thread}}
            )

    # Checkpoints are the conversation (type context): a clear of the summary keeps them.
    assert "LangGraph" not in aalis("clear", "--session", "ada", "-t", "summary")
    with SyncHost(config) as host:
        assert [e.key for e in host.memory.list_metadata(THREADS)] == ["ada", "bob"]

    assert "LangGraph checkpoints cleared (2 threads)" in aalis("clear", "--all", "--yes")
    with SyncHost(config) as host:
        store = host.memory
        assert store.list_metadata(THREADS) == []
        assert store.list_metadata(thread_namespace("ada")) == []
        assert store.list_metadata(thread_namespace("bob")) == []
        assert store.get_history("bob", None) == []
