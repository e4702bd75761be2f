"""The person of a thread: stamped on its history's user messages, so privacy knows it.

Recall's default ``user`` scope reaches only the sessions of the same person
(docs/host/privacy.md); a session whose user messages name nobody recalls only itself. The
saver takes the person from the run's ``config["configurable"]`` (``user_id``,
``platform``) or its own defaults. Run on a real host: memory-sqlite, memory-vector over
embedding-hash and vectorstore-sqlite, LangGraph running the graph with a fake model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import memory
from aalis_api_vectorstore import recall
from aalis_langgraph import AalisSaver, thread_namespace
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
    "memory-summary",
    "user-relation",
]


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": DISABLED},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


def _graph(saver: AalisSaver) -> Any:
    model = GenericFakeChatModel(messages=iter(AIMessage(f"Noted ({i}).") for i in range(50)))

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    return builder.compile(checkpointer=saver)


def _run(thread: str, **person: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **person}}


async def test_recall_in_user_mode_reaches_the_same_persons_threads_only(
    tmp_path: Path,
) -> None:
    async with Host(_config(tmp_path)) as host:
        saver = AalisSaver(host)
        graph = _graph(saver)
        await graph.ainvoke(
            {"messages": [HumanMessage("My passport number is X1234567.")]},
            _run("ada-trip", user_id="ada"),
        )
        await graph.ainvoke(
            {"messages": [HumanMessage("My passport number is Z7654321.")]},
            _run("bob-trip", user_id="bob"),
        )
        await graph.ainvoke(
            {"messages": [HumanMessage("Hello again.")]}, _run("ada-next", user_id="ada")
        )
        await saver.aflush()

        stored = await host.capability(memory).use.get_history("ada-trip")
        assert stored[0].metadata is not None
        assert (stored[0].metadata["platform"], stored[0].metadata["user_id"]) == (
            "langgraph",
            "ada",
        )
        assert "user_id" not in (stored[1].metadata or {})  # the reply is the model's

        hits = await host.capability(recall).use.recall("ada-next", "passport number", k=5)
        sessions = {h.session_id for h in hits}
        assert "ada-trip" in sessions
        assert "bob-trip" not in sessions
        assert any("X1234567" in (h.message.content or "") for h in hits)
        assert not any("Z7654321" in (h.message.content or "") for h in hits)


async def test_a_thread_without_a_person_recalls_only_itself(tmp_path: Path) -> None:
    async with Host(_config(tmp_path)) as host:
        saver = AalisSaver(host)
        graph = _graph(saver)
        await graph.ainvoke(
            {"messages": [HumanMessage("My passport number is X1234567.")]},
            _run("ada-trip", user_id="ada"),
        )
        await graph.ainvoke({"messages": [HumanMessage("Hello again.")]}, _run("nobody"))
        await saver.aflush()
        hits = await host.capability(recall).use.recall("nobody", "passport number", k=5)
        assert {h.session_id for h in hits} <= {"nobody"}


async def test_the_savers_default_person_and_the_copy_of_a_thread(tmp_path: Path) -> None:
    async with Host(_config(tmp_path)) as host:
        saver = AalisSaver(host, platform="telegram", user_id="42")
        graph = _graph(saver)
        await graph.ainvoke({"messages": [HumanMessage("Hi.")]}, _run("t"))
        await saver.acopy_thread("t", "t-copy")
        store = host.capability(memory).use
        for session in ("t", "t-copy"):
            first = (await store.get_history(session))[0]
            assert first.metadata is not None
            assert (first.metadata["platform"], first.metadata["user_id"]) == ("telegram", "42")
        # A run's config wins over the saver's default.
        await graph.ainvoke({"messages": [HumanMessage("Hi.")]}, _run("u", user_id="7"))
        await saver.aflush()
        first = (await store.get_history("u"))[0]
        assert first.metadata is not None
        assert first.metadata["user_id"] == "7"


@pytest.mark.parametrize("person", [{"user_id": ""}, {"user_id": "ada", "platform": "a:b"}])
async def test_a_malformed_person_writes_nothing(tmp_path: Path, person: dict[str, str]) -> None:
    async with Host(_config(tmp_path)) as host:
        graph = _graph(AalisSaver(host))
        with pytest.raises(ValueError, match="person"):
            await graph.ainvoke({"messages": [HumanMessage("Hi.")]}, _run("t", **person))
        store = host.capability(memory).use
        assert await store.get_history("t") == []
        assert await store.list_metadata(thread_namespace("t")) == []


def test_a_malformed_default_person_is_refused_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="person"):
        AalisSaver(_NoHost(), user_id="ada", platform="")


class _NoHost:
    """Construction reads nothing from the host but its handles."""

    def capability(self, _cap: Any) -> Any:
        return None
