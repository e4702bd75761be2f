"""The mirror record: compact rows, and a record written by an earlier version still read.

The record maps each graph message to its Aalis message and is rewritten at every
checkpoint that changed the messages; rows are ``[id, fingerprint, timestamp]``. A record
of the earlier form (``{"id", "digest", "ts"}`` rows) must not make every message look
changed (that would delete and re-save the whole history once): it is compared with the
old digest and rewritten in the new form. A copy inside the put (``history_delay=0``)
writes the record before the checkpoint's commit, so a commit that fails leaves a record
naming the messages it saved, and the next checkpoint deletes them from the history (they
are not in the graph's state); a copy behind the puts is owed only once the checkpoint is
committed, so a failed commit owes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import memory
from aalis_langgraph import AalisSaver, thread_namespace
from aalis_langgraph._layout import MIRROR_KEY
from aalis_langgraph._messages import digest
from aalis_plugin_memory_sqlite import MemorySqlite
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from aalis_core import Host, Plugin, hookimpl


class _Deletions(Plugin):
    name = "test-deletions"

    def __init__(self) -> None:
        self.ids: list[str] = []

    @hookimpl
    def memory_messages_deleted(
        self, session_id: str, timestamps: Sequence[int], ids: Sequence[str]
    ) -> None:
        self.ids.extend(ids)


def _graph(saver: AalisSaver) -> Any:
    model = GenericFakeChatModel(messages=iter(AIMessage(f"reply {i}") for i in range(10)))

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    return builder.compile(checkpointer=saver)


async def test_an_earlier_record_is_read_without_resaving_the_history(tmp_path: Path) -> None:
    deletions = _Deletions()
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite(), deletions], discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host)
        graph = _graph(saver)
        thread = {"configurable": {"thread_id": "t"}}
        for text in ("one", "two"):
            await graph.ainvoke({"messages": [HumanMessage(text)]}, thread)
        await saver.aflush()
        space = thread_namespace("t")
        record = await store.get_metadata(space, MIRROR_KEY)
        assert record is not None
        rows = record["messages"]
        assert all(isinstance(r, list) and len(r) == 3 for r in rows.values())
        before = [(m.id, m.timestamp) for m in await store.get_history("t")]

        # The record as the earlier version wrote it.
        state = await graph.aget_state(thread)
        by_id = {m.id: m for m in state.values["messages"]}
        legacy = {k: {"id": r[0], "digest": digest(by_id[k]), "ts": r[2]} for k, r in rows.items()}
        await store.save_metadata(space, MIRROR_KEY, {"messages": legacy})

        await graph.ainvoke({"messages": [HumanMessage("three")]}, thread)
        await saver.aflush()
        after = [(m.id, m.timestamp) for m in await store.get_history("t")]
        assert after[:4] == before
        assert [m.content for m in await store.get_history("t")] == [
            "one",
            "reply 0",
            "two",
            "reply 1",
            "three",
            "reply 2",
        ]
        assert deletions.ids == []  # nothing looked changed
        upgraded = await store.get_metadata(space, MIRROR_KEY)
        assert upgraded is not None
        assert all(isinstance(r, list) for r in upgraded["messages"].values())
        assert len(upgraded["messages"]) == 6


class _FailOnce:
    """The real store, whose next checkpoint commit fails (a crash at that instant)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def commit_metadata(self, ops: Any) -> None:
        if self.armed and any(str(getattr(op, "key", "")).startswith('["c"') for op in ops):
            self.armed = False
            raise OSError("disk gone at the checkpoint commit")
        await self._store.commit_metadata(ops)


class _Handle:
    def __init__(self, use: Any) -> None:
        self.use = use
        self.present = True


@pytest.mark.parametrize("delay", [0, 0.02], ids=["inside-the-put", "behind-the-puts"])
async def test_a_failed_checkpoint_commit_leaves_no_duplicate_in_the_history(
    tmp_path: Path, delay: float
) -> None:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite()], discover=False) as host:
        store = host.capability(memory).use
        failing = _FailOnce(store)
        saver = AalisSaver(host, memory=_Handle(failing), history_delay=delay)
        graph = _graph(saver)
        thread = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"messages": [HumanMessage("one")]}, thread)
        await saver.aflush()
        failing.armed = True  # the next checkpoint commit fails
        with pytest.raises(OSError, match="disk gone"):
            await graph.ainvoke({"messages": [HumanMessage("two")]}, thread, durability="sync")
        assert not failing.armed
        await graph.ainvoke({"messages": [HumanMessage("three")]}, thread)
        await saver.aflush()
        contents = [m.content for m in await store.get_history("t")]
        state = await graph.aget_state(thread)
        assert contents == [m.content for m in state.values["messages"]]
        assert len(contents) == len(set(contents))  # nothing saved twice
        record = await store.get_metadata(thread_namespace("t"), MIRROR_KEY)
        assert record is not None
        assert len(record["messages"]) == len(contents)
