"""``amemory_context``: the summary and recall reach the model through a graph's node.

Real host: memory-sqlite, memory-summary (offline), memory-vector over embedding-hash and
vectorstore-sqlite, discovered as installed; LangGraph runs the graph with a fake model. The
node sends the context in front of its messages without returning it into the state.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aalis_api_memory import compression, memory
from aalis_langgraph import CONTEXT_KEY, AalisSaver, amemory_context
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph

from aalis_core import Host

DISABLED = [
    "memory-mongodb",
    "memory-postgres",
    "vectorstore-pgvector",
    "llm-openai",
    "embedding-openai",
    "embedding-local",
    "user-relation",
]


def _config(tmp_path: Path, **summary: Any) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": DISABLED, "memory-summary": summary},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


def _graph(host: Host, sent: list[list[BaseMessage]]) -> Any:
    model = GenericFakeChatModel(messages=iter(AIMessage(f"Reply {i}.") for i in range(50)))

    async def chat(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        context = await amemory_context(host, config, state["messages"])
        prompt = [*context, *state["messages"]]
        sent.append(prompt)
        return {"messages": [await model.ainvoke(prompt)]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    return builder.compile(checkpointer=AalisSaver(host))


def _run(thread: str, user: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def _system(prompt: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in prompt if isinstance(m, SystemMessage))


async def test_a_new_thread_recalls_the_same_persons_threads_from_its_first_turn(
    tmp_path: Path,
) -> None:
    async with Host(_config(tmp_path)) as host:
        sent: list[list[BaseMessage]] = []
        graph = _graph(host, sent)
        await graph.ainvoke(
            {"messages": [HumanMessage("My passport number is X1234567.")]},
            _run("ada-trip", "ada"),
        )
        await graph.ainvoke(
            {"messages": [HumanMessage("My passport number is Z7654321.")]},
            _run("bob-trip", "bob"),
        )
        await graph.ainvoke(
            {"messages": [HumanMessage("What is my passport number?")]}, _run("ada-next", "ada")
        )
        first_turn = sent[-1]
        assert "X1234567" in _system(first_turn)
        assert "Z7654321" not in _system(first_turn)
        assert all(
            m.additional_kwargs.get(CONTEXT_KEY) for m in first_turn if isinstance(m, SystemMessage)
        )
        # Sent, never kept: the state and the history hold the conversation only.
        state = await graph.aget_state(_run("ada-next", "ada"))
        assert [type(m) for m in state.values["messages"]] == [HumanMessage, AIMessage]
        saver = graph.checkpointer
        assert isinstance(saver, AalisSaver)
        await saver.aflush()  # the last reply's copy is made behind the put
        stored = await host.capability(memory).use.get_history("ada-next")
        assert [m.role for m in stored] == ["user", "assistant"]


async def test_the_summary_of_a_compressed_thread_reaches_the_model(tmp_path: Path) -> None:
    async with Host(_config(tmp_path, history_limit=6)) as host:
        sent: list[list[BaseMessage]] = []
        graph = _graph(host, sent)
        for i in range(5):
            await graph.ainvoke(
                {"messages": [HumanMessage(f"My fact {i} is {i * 7}.")]}, _run("long", "ada")
            )
        for _ in range(100):  # the compression runs in the background
            if await host.capability(compression).use.summary("long") is not None:
                break
            await asyncio.sleep(0.05)
        await graph.ainvoke({"messages": [HumanMessage("What was fact 0?")]}, _run("long", "ada"))
        first = sent[-1][0]
        assert isinstance(first, SystemMessage)
        assert str(first.content).startswith("Summary of the earlier conversation:")


async def test_nothing_to_add_is_nothing(tmp_path: Path) -> None:
    async with Host(_config(tmp_path)) as host:
        context = await amemory_context(host, _run("t", "ada"), [HumanMessage("Hello.")])
        assert context == []
