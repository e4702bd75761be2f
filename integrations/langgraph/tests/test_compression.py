"""A long thread's history compresses by itself: the saver reports the session's length.

After each checkpoint that added messages to the history, ``AalisSaver`` emits
``token_usage`` with the message count (no token figures: it sees no model call), so
memory-summary's count line (``history_limit``) archives the older messages behind a
summary in the background, as for any chat (docs/integrations/langgraph.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aalis_api_memory import compression, memory
from aalis_langgraph import AalisSaver
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
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


async def test_a_long_thread_compresses_by_itself(tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": DISABLED, "memory-summary": {"history_limit": 6}},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }
    async with Host(config) as host:
        model = GenericFakeChatModel(messages=iter(AIMessage(f"Reply {i}.") for i in range(9)))

        def chat(state: MessagesState) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("chat", chat)
        builder.add_edge(START, "chat")
        graph = builder.compile(checkpointer=AalisSaver(host))
        thread = {"configurable": {"thread_id": "long", "user_id": "ada"}}
        for i in range(5):
            await graph.ainvoke({"messages": [HumanMessage(f"My fact {i} is {i * 7}.")]}, thread)
        summary = None
        for _ in range(100):  # the compression runs in the background
            summary = await host.capability(compression).use.summary("long")
            if summary is not None:
                break
            await asyncio.sleep(0.05)
        assert summary is not None
        active = await host.capability(memory).use.get_history("long")
        assert len(active) < 10  # older messages archived behind the summary
        # The graph's own state is whole: compression shortens the history, not the channel.
        state = await graph.aget_state(thread)
        assert len(state.values["messages"]) == 10
