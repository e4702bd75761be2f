"""A LangGraph graph run by LangGraph itself on ``AalisSaver``, with a fake chat model.

The graph keeps its thread across hosts (the checkpoints are in the SQLite file), the sync
and async sides both work, and the checkpoints are ordinary metadata: exported with the
rest of the memory, removed with the thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aalis_agent import SyncHost
from aalis_api_memory import memory
from aalis_langgraph import THREADS, AalisSaver, thread_namespace
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from aalis_core import Host


def _graph(replies: list[str], saver: AalisSaver) -> Any:
    model = GenericFakeChatModel(messages=iter(AIMessage(r) for r in replies))

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    return builder.compile(checkpointer=saver)


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {
            "disabled": ["memory-mongodb", "memory-postgres", "llm-openai", "embedding-local"]
        },
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


def test_a_thread_survives_the_host_and_is_ordinary_metadata(tmp_path: Path) -> None:
    thread = {"configurable": {"thread_id": "ada"}}
    with SyncHost(_config(tmp_path)) as aalis:
        graph = _graph(["Hello Ada."], AalisSaver(aalis))
        graph.invoke({"messages": [HumanMessage("I am Ada.")]}, thread)
    with SyncHost(_config(tmp_path)) as aalis:
        saver = AalisSaver(aalis)
        graph = _graph(["You are Ada."], saver)
        out = graph.invoke({"messages": [HumanMessage("Who am I?")]}, thread)
        assert [m.content for m in out["messages"]] == [
            "I am Ada.",
            "Hello Ada.",
            "Who am I?",
            "You are Ada.",
        ]
        history = list(saver.list(thread))
        assert len(history) >= 4  # input and step checkpoints of two runs, newest first
        ids = [t.config["configurable"]["checkpoint_id"] for t in history]
        assert ids == sorted(ids, reverse=True)
        # Checkpoints are metadata of the store: what export and migrate carry.
        store = aalis.memory
        assert thread_namespace("ada") in store.list_namespaces()
        assert [e.key for e in store.list_metadata(THREADS)] == ["ada"]
        saver.delete_thread("ada")
        assert graph.get_state(thread).values == {}
        assert store.list_metadata(thread_namespace("ada")) == []
        assert store.get_history("ada", None) == []


async def test_the_async_side_on_a_host_on_this_loop(tmp_path: Path) -> None:
    async with Host(_config(tmp_path)) as host:
        saver = AalisSaver(host)
        graph = _graph(["One.", "Two."], saver)
        thread = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"messages": [HumanMessage("1")]}, thread)
        out = await graph.ainvoke({"messages": [HumanMessage("2")]}, thread)
        assert [m.content for m in out["messages"]] == ["1", "One.", "2", "Two."]
        state = await graph.aget_state(thread)
        assert len(state.values["messages"]) == 4
        # The thread's messages are also its session's history (tests/test_history.py),
        # copied behind the puts: ``aflush`` waits for the copy.
        await saver.aflush()
        stored = await host.capability(memory).use.get_history("t")
        assert [m.content for m in stored] == ["1", "One.", "2", "Two."]
