"""Reading a thread's newest state costs the same however long the thread is.

Every graph invocation starts with ``get_tuple`` of the newest checkpoint; the saver reads
it from the namespace's head (which carries the checkpoint and the values of the channels
it reads) and the checkpoint's pending writes: two metadata reads, not one per channel
(docs/integrations/langgraph.md, "Where the checkpoints are"). The reads are counted on
the real SQLite store, through a host.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aalis_api_memory import memory
from aalis_langgraph import AalisSaver
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from aalis_core import Host


class _Counting:
    """The real store, with its metadata reads counted (everything else passes through)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def get_metadata(self, namespace: str, key: str) -> Any:
        self.reads += 1
        return await self._store.get_metadata(namespace, key)

    async def list_metadata(self, namespace: str) -> Any:
        self.reads += 1_000  # a listing is never acceptable on this path
        return await self._store.list_metadata(namespace)


class _Handle:
    def __init__(self, use: Any) -> None:
        self.use = use
        self.present = True


class _State(MessagesState):
    step: int
    note: str


def _graph(saver: AalisSaver, turns: int) -> Any:
    model = GenericFakeChatModel(messages=iter(AIMessage(f"reply {i}") for i in range(turns)))

    def chat(state: _State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])], "step": state.get("step", 0) + 1}

    def note(state: _State) -> dict[str, Any]:
        return {"note": f"after {state['step']}"}

    builder = StateGraph(_State)
    builder.add_node("chat", chat)
    builder.add_node("note", note)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "note")
    return builder.compile(checkpointer=saver)


async def test_the_newest_state_is_two_reads_at_any_length(tmp_path: Path) -> None:
    config = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }
    async with Host(config, discover=False, plugins=_providers()) as host:
        counting = _Counting(host.capability(memory).use)
        saver = AalisSaver(host, memory=_Handle(counting))
        graph = _graph(saver, 30)
        thread = {"configurable": {"thread_id": "t"}}
        reads: list[int] = []
        for turn in range(30):
            await graph.ainvoke({"messages": [HumanMessage(f"q {turn}")]}, thread)
            if turn in (1, 29):
                counting.reads = 0
                latest = await saver.aget_tuple(thread)
                reads.append(counting.reads)
                assert latest is not None
                # The same checkpoint read the long way (by id, entry and blobs) is equal.
                by_id = await saver.aget_tuple(latest.config)
                assert by_id is not None
                assert by_id.checkpoint == latest.checkpoint
                assert by_id.metadata == latest.metadata
                assert by_id.pending_writes == latest.pending_writes
                assert by_id.parent_config == latest.parent_config
        assert reads == [2, 2]
        state = await graph.aget_state(thread)
        assert state.values["step"] == 30
        assert state.values["note"] == "after 30"
        assert len(state.values["messages"]) == 60


def _providers() -> list[object]:
    from aalis_plugin_memory_sqlite import MemorySqlite

    return [MemorySqlite()]


async def test_a_large_channel_is_written_once_and_read_from_its_blob(tmp_path: Path) -> None:
    config = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }
    async with Host(config, discover=False, plugins=_providers()) as host:
        store = host.capability(memory).use
        counting = _Counting(store)
        saver = AalisSaver(host, memory=_Handle(counting))
        graph = _graph(saver, 2)
        thread = {"configurable": {"thread_id": "t"}}
        long_text = "a long question " * 2_000  # ~32 kB: past what the head carries
        await graph.ainvoke({"messages": [HumanMessage(long_text)]}, thread)
        head = await store.get_metadata("langgraph:t", '["h",""]')
        assert head is not None
        assert "messages" not in head["values"]  # the big value is in its blob only
        assert {"step", "note"} <= set(head["values"])  # the small ones ride along
        counting.reads = 0
        latest = await saver.aget_tuple(thread)
        assert counting.reads == 3  # head, the messages blob, the writes
        assert latest is not None
        assert latest.checkpoint["channel_values"]["messages"][0].content == long_text
