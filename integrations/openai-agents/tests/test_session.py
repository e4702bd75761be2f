"""``AalisSession`` item by item on a real SQLite host: lossless round trips, ``pop_item`` by
id with its delete event, ``clear_session`` through the clear chain, limits, bad input."""

from __future__ import annotations

import math
from typing import Any

import pytest
from aalis_api_memory import memory
from aalis_openai_agents import ITEM_KEY, AalisSession, message_to_items
from aalis_schema_message import Message, ToolCall
from agents import SQLiteSession

from aalis_core import Host

IMAGE = "data:image/png;base64," + "iVBORw0KGgo" * 50

ITEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is in this picture?"},
            {"type": "input_image", "image_url": IMAGE, "detail": "high"},
            {"type": "input_file", "file_id": "file-abc", "filename": "notes.pdf"},
        ],
    },
    {
        "type": "reasoning",
        "id": "rs_123",
        "summary": [{"type": "summary_text", "text": "The user shows a cat."}],
        "encrypted_content": "gAAAA-opaque",
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": '{"q": "cat"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "a tabby cat"},
    {
        "type": "message",
        "id": "msg_9",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "A tabby cat.",
                "annotations": [{"type": "url_citation", "url": "https://example.org"}],
                "logprobs": [],
            }
        ],
    },
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "cats"}},
    {"type": "some_future_item", "id": "x_1", "payload": {"nested": [1, 2.5, None, True]}},
]


async def test_every_kind_of_item_comes_back_as_it_went_in(host: Host) -> None:
    session = AalisSession("s", host)
    await session.add_items(ITEMS)
    assert await session.get_items() == ITEMS
    # ... exactly as the SDK's own SQLite session keeps them
    reference = SQLiteSession("s")
    await reference.add_items(ITEMS)
    assert await reference.get_items() == await session.get_items()


async def test_the_store_sees_an_ordinary_conversation(host: Host) -> None:
    await AalisSession("s", host).add_items(ITEMS)
    stored = await host.capability(memory).use.get_history("s", math.inf)
    by_type = {(m.metadata or {})[ITEM_KEY].get("type", m.role): m for m in stored}
    user = stored[1]
    assert user.role == "user"
    assert user.content == "What is in this picture?"
    assert user.images == (ITEMS[1]["content"][1],)  # the image, stored once
    assert IMAGE not in str(user.metadata)
    reasoning = by_type["reasoning"]
    assert reasoning.kind == "reasoning"
    assert reasoning.reasoning_content == "The user shows a cat."
    assert by_type["function_call"].tool_calls == (
        ToolCall(id="call_1", name="lookup", arguments='{"q": "cat"}'),
    )
    output = by_type["function_call_output"]
    assert (output.role, output.tool_call_id, output.content) == ("tool", "call_1", "a tabby cat")
    assert by_type["message"].content == "A tabby cat."
    assert by_type["some_future_item"].kind == "some_future_item"
    assert len({m.id for m in stored}) == len(ITEMS)


async def test_messages_saved_by_other_writers_read_as_input_items(host: Host) -> None:
    store = host.capability(memory).use
    for message in [
        Message(role="user", content="hi", timestamp=1),
        Message(
            role="assistant",
            content="let me look",
            tool_calls=(ToolCall(id="c1", name="find", arguments="{}"),),
            timestamp=2,
        ),
        Message(role="tool", content="found", tool_call_id="c1", timestamp=3),
        Message(role="notice", content="not for a model", timestamp=4),
        Message(role="notice", content="turn", kind="event-marker", timestamp=5),
    ]:
        await store.save_message("chat", message)
    assert await AalisSession("chat", host).get_items() == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "let me look"},
        {"type": "function_call", "call_id": "c1", "name": "find", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
    ]


async def test_limit_returns_the_newest_items_in_order(host: Host) -> None:
    session = AalisSession("s", host)
    await session.add_items([{"role": "user", "content": str(i)} for i in range(5)])
    assert [i["content"] for i in await session.get_items(2)] == ["3", "4"]
    assert await session.get_items(0) == []
    assert len(await session.get_items()) == 5
    with pytest.raises(TypeError):
        await session.get_items(1.5)  # type: ignore[arg-type]


async def test_pop_item_deletes_the_newest_item_by_id_and_says_so(
    host: Host, recorder: Any
) -> None:
    session = AalisSession("s", host)
    # Two items in one millisecond on purpose: the pop must take only the newest one.
    await session.add_items(
        [{"role": "user", "content": "keep me"}, {"role": "user", "content": "pop me"}]
    )
    store = host.capability(memory).use
    newest = (await store.get_history("s"))[-1]
    assert await session.pop_item() == {"role": "user", "content": "pop me"}
    assert await session.get_items() == [{"role": "user", "content": "keep me"}]
    assert recorder.deleted == [
        {"session_id": "s", "timestamps": [newest.timestamp], "ids": [newest.id]}
    ]
    assert await session.pop_item() == {"role": "user", "content": "keep me"}
    assert await session.pop_item() is None
    assert len(recorder.deleted) == 2


async def test_clear_session_runs_the_clear_chain(host: Host, recorder: Any) -> None:
    session = AalisSession("s", host)
    await session.add_items(ITEMS[:2])
    await AalisSession("other", host).add_items(ITEMS[:1])
    await session.clear_session()
    assert await session.get_items() == []
    assert [(r.scope, r.session_id) for r in recorder.clears] == [("session", "s")]
    assert len(await AalisSession("other", host).get_items()) == 1


async def test_bad_items_are_refused_and_nothing_is_saved(host: Host) -> None:
    session = AalisSession("s", host)
    with pytest.raises(ValueError, match="JSON"):
        await session.add_items([{"role": "user", "content": "ok"}, {"bad": {1, 2}}])
    with pytest.raises(TypeError, match="mapping"):
        await session.add_items(["not an item"])  # type: ignore[list-item]
    assert await session.get_items() == []
    with pytest.raises(ValueError, match="session id"):
        AalisSession("", host)


async def test_saves_are_announced_for_recall(host: Host, recorder: Any) -> None:
    await AalisSession("s", host, user_id="ada").add_items(ITEMS[:2])
    (saved,) = recorder.saved
    assert [m.role for m in saved] == ["system", "user"]
    assert saved[1].metadata is not None
    assert (saved[1].metadata["platform"], saved[1].metadata["user_id"]) == (
        "openai-agents",
        "ada",
    )


def test_message_to_items_skips_prompt_contributions() -> None:
    block = Message(role="system", content="recall", metadata={"prompt_contribution": "x"})
    assert message_to_items(block) == []


@pytest.mark.parametrize("provider", ["memory-sqlite", "memory-inmemory"])
async def test_changing_a_returned_item_changes_nothing_stored(
    tmp_path: Any, provider: str
) -> None:
    from aalis_plugin_memory_inmemory import MemoryInmemory
    from aalis_plugin_memory_sqlite import MemorySqlite

    plugin = MemorySqlite() if provider == "memory-sqlite" else MemoryInmemory()
    async with Host({"host": {"data_dir": str(tmp_path)}}, [plugin], discover=False) as host:
        session = AalisSession("s", host)
        await session.add_items(ITEMS)
        items = await session.get_items()
        items[1]["content"][0]["text"] = "changed"
        items[5]["content"].clear()
        assert await session.get_items() == ITEMS
