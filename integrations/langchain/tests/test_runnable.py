"""Round trips through a real RunnableWithMessageHistory chain with LangChain's fake chat
model: the history the model sees is the one Aalis stores, turn after turn, sync and async."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import SyncHost
from aalis_langchain import AalisChatMessageHistory
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from aalis_core import Host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": ["memory-mongodb", "llm-openai"]},
    }


@pytest.fixture
def aalis(tmp_path: Path) -> Iterator[SyncHost]:
    with SyncHost(_config(tmp_path)) as host:
        yield host


def _chain(
    replies: list[str], seen: list[list[BaseMessage]], get_history: Any
) -> RunnableWithMessageHistory:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You are terse."),
            MessagesPlaceholder("history"),
            ("human", "{question}"),
        ]
    )

    def record(value: Any) -> Any:
        seen.append(list(value.to_messages()))
        return value

    model = GenericFakeChatModel(messages=iter(AIMessage(content=r) for r in replies))
    return RunnableWithMessageHistory(
        prompt | RunnableLambda(record) | model,
        get_history,
        input_messages_key="question",
        history_messages_key="history",
    )


def test_two_turns_sync(aalis: SyncHost) -> None:
    seen: list[list[BaseMessage]] = []
    chain = _chain(
        ["Hello Ada.", "Your name is Ada."],
        seen,
        lambda session_id: AalisChatMessageHistory(session_id, aalis),
    )
    config = {"configurable": {"session_id": "lc-1"}}
    first = chain.invoke({"question": "I am Ada."}, config=config)
    second = chain.invoke({"question": "What is my name?"}, config=config)
    assert (first.content, second.content) == ("Hello Ada.", "Your name is Ada.")
    # The second prompt carried the first turn, read back from the store.
    assert [type(m).__name__ for m in seen[1]] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
    ]
    assert seen[1][1].content == "I am Ada."
    assert seen[1][2].content == "Hello Ada."
    # And the store holds exactly the four turns, as Aalis messages any plugin can read.
    stored = aalis.history("lc-1")
    assert [(m.role, m.content) for m in stored] == [
        ("user", "I am Ada."),
        ("assistant", "Hello Ada."),
        ("user", "What is my name?"),
        ("assistant", "Your name is Ada."),
    ]
    # The system prompt is the chain's, never saved.
    assert all(
        not isinstance(m, SystemMessage) for m in AalisChatMessageHistory("lc-1", aalis).messages
    )


def test_a_new_process_continues_the_conversation(tmp_path: Path) -> None:
    config = {"configurable": {"session_id": "lc-2"}}
    with SyncHost(_config(tmp_path)) as first_host:
        _chain(["one"], [], lambda s: AalisChatMessageHistory(s, first_host)).invoke(
            {"question": "first"}, config=config
        )
    seen: list[list[BaseMessage]] = []
    with SyncHost(_config(tmp_path)) as second_host:
        _chain(["two"], seen, lambda s: AalisChatMessageHistory(s, second_host)).invoke(
            {"question": "second"}, config=config
        )
        assert [m.content for m in seen[0][1:]] == ["first", "one", "second"]
        assert len(second_host.history("lc-2")) == 4


async def test_two_turns_async_on_an_async_host(tmp_path: Path) -> None:
    async with Host(_config(tmp_path)) as host:
        seen: list[list[BaseMessage]] = []
        chain = _chain(
            ["a1", "a2"], seen, lambda session_id: AalisChatMessageHistory(session_id, host)
        )
        config = {"configurable": {"session_id": "lc-3"}}
        await chain.ainvoke({"question": "q1"}, config=config)
        await chain.ainvoke({"question": "q2"}, config=config)
        assert [m.content for m in seen[1][1:]] == ["q1", "a1", "q2"]
        history = AalisChatMessageHistory("lc-3", host)
        got = await history.aget_messages()
        assert [(type(m), m.content) for m in got] == [
            (HumanMessage, "q1"),
            (AIMessage, "a1"),
            (HumanMessage, "q2"),
            (AIMessage, "a2"),
        ]


def test_without_a_history_key_the_inputs_are_not_saved_twice(aalis: SyncHost) -> None:
    """RunnableWithMessageHistory subtracts ``len(history.messages)`` from its input when no
    history key is set: the history must report exactly what it prepended."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content="r1"), AIMessage(content="r2")]))
    chain = RunnableWithMessageHistory(
        model, lambda session_id: AalisChatMessageHistory(session_id, aalis)
    )
    config = {"configurable": {"session_id": "lc-4"}}
    chain.invoke([HumanMessage(content="m1")], config=config)
    chain.invoke([HumanMessage(content="m2")], config=config)
    assert [m.content for m in aalis.history("lc-4")] == ["m1", "r1", "m2", "r2"]
