"""LangMem's memory tools on ``AalisStore``, run by LangGraph with a fake chat model.

LangMem (PyPI ``langmem``, pinned in the test extra) is how a LangGraph agent keeps long-term
memories: ``create_manage_memory_tool`` writes them into the graph's store,
``create_search_memory_tool`` finds them by meaning. Here the store is ``AalisStore`` on a
real host (memory-sqlite for the items, embedding-hash and vectorstore-sqlite for the
search), the tools run in LangGraph's ``ToolNode``, and the model is LangChain's
``GenericFakeChatModel`` emitting the tool calls a real model would.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aalis_api_vectorstore import vectorstore
from aalis_langgraph import AalisSaver, AalisStore, store_namespace
from aalis_plugin_embedding_hash import EmbeddingHash
from aalis_plugin_memory_sqlite import MemorySqlite
from aalis_plugin_vectorstore_sqlite import VectorstoreSqlite
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langmem import create_manage_memory_tool, create_search_memory_tool

from aalis_core import Host

NAMESPACE = ("memories", "{langgraph_user_id}")


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    plugins = [MemorySqlite(), EmbeddingHash(), VectorstoreSqlite()]
    async with Host(config, plugins, discover=False) as started:
        yield started


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _agent(host: Host, replies: Iterator[AIMessage]) -> Any:
    """A tool-calling agent as LangGraph builds one: a model node, LangMem's tools in a
    ``ToolNode``, back to the model until it answers without a call."""
    tools = [create_manage_memory_tool(NAMESPACE), create_search_memory_tool(NAMESPACE)]
    model = GenericFakeChatModel(messages=replies)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=AalisSaver(host), store=AalisStore(host))


def _run(thread: str, user: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "langgraph_user_id": user, "user_id": user}}


def _tool_results(out: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in out["messages"] if isinstance(m, ToolMessage)]


async def test_langmem_remembers_searches_updates_and_forgets_through_aalis(
    host: Host,
) -> None:
    store = AalisStore(host)
    # Thread 1: Ada tells the agent two things; the model stores them with manage_memory.
    replies = iter(
        [
            _call("manage_memory", {"content": "Ada's passport number is X1234567"}, "c1"),
            _call("manage_memory", {"content": "Ada prefers window seats"}, "c2"),
            AIMessage("Noted both."),
        ]
    )
    out = await _agent(host, replies).ainvoke(
        {"messages": [HumanMessage("My passport is X1234567; I like window seats.")]},
        _run("trip-1", "ada"),
    )
    assert out["messages"][-1].content == "Noted both."
    created = _tool_results(out)
    assert len(created) == 2
    assert all(text.startswith("created memory ") for text in created)
    memories = await store.asearch(("memories", "ada"))
    assert sorted(m.value["content"] for m in memories) == [
        "Ada prefers window seats",
        "Ada's passport number is X1234567",
    ]
    # Indexed in the host's vector store (2 memories and the namespace's marker).
    entries = await host.capability(vectorstore).use.entries(store_namespace(("memories", "ada")))
    assert len(entries) == 3

    # Thread 2, another conversation of Ada's: search_memory finds it by meaning, best first.
    replies = iter(
        [_call("search_memory", {"query": "passport number", "limit": 1}, "s1"), AIMessage("X.")]
    )
    out = await _agent(host, replies).ainvoke(
        {"messages": [HumanMessage("What is my passport number?")]}, _run("trip-2", "ada")
    )
    (found,) = _tool_results(out)
    hits = json.loads(found)
    assert [h["value"]["content"] for h in hits] == ["Ada's passport number is X1234567"]
    assert hits[0]["score"] is not None
    passport_id = hits[0]["key"]

    # Bob's search runs in Bob's namespace: none of Ada's memories come back.
    replies = iter([_call("search_memory", {"query": "passport number"}, "s2"), AIMessage("?")])
    out = await _agent(host, replies).ainvoke(
        {"messages": [HumanMessage("What is my passport number?")]}, _run("bob-1", "bob")
    )
    assert json.loads(_tool_results(out)[0]) == []

    # Update, then delete, by the id the search returned.
    replies = iter(
        [
            _call(
                "manage_memory",
                {
                    "content": "Ada's passport number is Y7654321",
                    "action": "update",
                    "id": passport_id,
                },
                "u1",
            ),
            _call("search_memory", {"query": "passport number", "limit": 1}, "s3"),
            _call("manage_memory", {"action": "delete", "id": passport_id}, "d1"),
            _call("search_memory", {"query": "passport number"}, "s4"),
            AIMessage("Done."),
        ]
    )
    out = await _agent(host, replies).ainvoke(
        {"messages": [HumanMessage("New passport: Y7654321. Then forget it.")]},
        _run("trip-3", "ada"),
    )
    updated, after_update, deleted, after_delete = _tool_results(out)
    assert updated == f"updated memory {passport_id}"
    assert json.loads(after_update)[0]["value"]["content"] == "Ada's passport number is Y7654321"
    assert deleted == f"Deleted memory {passport_id}"
    assert [h["value"]["content"] for h in json.loads(after_delete)] == ["Ada prefers window seats"]
    entries = await host.capability(vectorstore).use.entries(store_namespace(("memories", "ada")))
    assert len(entries) == 2  # the deleted memory's vector went with it
