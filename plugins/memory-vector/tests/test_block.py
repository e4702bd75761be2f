"""The prompt block (docs/host/recall.md, "The prompt block"): each message once, each text
once, overlapping excerpts merged, oldest first with dates, within ``prompt_tokens``."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from aalis_agent import PromptRequest, collect_prompt_blocks, estimate_text_tokens
from aalis_api_memory import memory
from aalis_plugin_memory_vector import MemoryVector
from aalis_schema_message import Message, new_message_id

from aalis_core import Host

from .conftest import Providers, inmemory

T0 = 1_700_000_000_000
MINUTE = 60_000
#: What a real assistant says again and again (the chatty and neutral styles of
#: benchmarks/summary_quality_data.py): the line that filled the block in the issue.
ACK = "Got it, thanks. I will keep that in mind for your trip planning."


class World:
    def __init__(self, host: Host, plugin: MemoryVector) -> None:
        self.host = host
        self.plugin = plugin

    async def say(self, session_id: str, *messages: Message) -> None:
        named = [m.with_id(new_message_id()) for m in messages]
        store = self.host.capability(memory).use
        for message in named:
            await store.save_message(session_id, message)
        await self.host.emit("memory_messages_saved", session_id=session_id, messages=named)
        assert self.plugin.indexer is not None
        assert await self.plugin.indexer.settle(5.0)

    async def block(self, session_id: str, query: str, history: tuple[Message, ...] = ()) -> str:
        blocks = await collect_prompt_blocks(
            self.host, PromptRequest(session_id=session_id, query=query, history=history)
        )
        assert len(blocks) <= 1
        return blocks[0].content if blocks else ""


@pytest.fixture
async def world(request: pytest.FixtureRequest) -> AsyncIterator[World]:
    config = getattr(request, "param", None) or {}
    plugin = MemoryVector()
    host = Host(
        {"plugins": {"memory-vector": {"cross_session_mode": "all", **config}}},
        [inmemory.MemoryInmemory(), Providers(), plugin],
        discover=False,
    )
    async with host:
        yield World(host, plugin)


def user(text: str, ts: int) -> Message:
    return Message(role="user", content=text, timestamp=ts)


def assistant(text: str, ts: int) -> Message:
    return Message(role="assistant", content=text, timestamp=ts)


def trip_conversation() -> list[Message]:
    """Four questions about the Lisbon trip, each answered with the same acknowledgement,
    then unrelated turns: the hits are the four questions, their neighbours the answers."""
    lines = [
        "For the Lisbon trip the hotel is the Alfama Suites",
        "For the Lisbon trip the flight is TP1351 on Friday",
        "For the Lisbon trip the budget is 1800 euros",
        "For the Lisbon trip my sister Ana comes along",
        "My bicycle needs new brakes",
        "The plumber comes on Monday",
    ]
    messages: list[Message] = []
    for i, line in enumerate(lines):
        messages.append(user(line, T0 + 2 * i * MINUTE))
        messages.append(assistant(ACK, T0 + (2 * i + 1) * MINUTE))
    return messages


def body(block: str) -> list[str]:
    """The message lines of a block as "role: text" (headings and dates left out)."""
    found = (re.search(r"\b(user|assistant): .*$", line) for line in block.splitlines())
    return [match.group() for match in found if match is not None]


@pytest.mark.parametrize("world", [{"prompt_k": 3}], indirect=True)
async def test_an_answer_said_many_times_is_shown_once(world: World) -> None:
    await world.say("s", *trip_conversation())
    block = await world.block("now", "what did I plan for the Lisbon trip?")
    lines = body(block)
    assert lines, block
    # Before: 5 lines of 8 were the acknowledgement (every neighbour of every hit).
    assert lines.count(f"assistant: {ACK}") == 1, block
    assert len(lines) == len(set(lines)), block


@pytest.mark.parametrize("world", [{"prompt_k": 3}], indirect=True)
async def test_hits_next_to_each_other_are_one_excerpt_in_time_order(world: World) -> None:
    await world.say("s", *trip_conversation())
    block = await world.block("now", "what did I plan for the Lisbon trip?")
    headers = [line for line in block.splitlines() if line.startswith("[")]
    # three hits two messages apart: their neighbours overlap, so one excerpt, one date
    assert len(headers) == 1, block
    assert headers[0].startswith("[20"), headers  # a date, not an id or a number
    texts = body(block)
    users = [t for t in texts if t.startswith("user:")]
    assert len(users) == 3
    order = [
        next(i for i, m in enumerate(trip_conversation()) if t.endswith(str(m.content)))
        for t in users
    ]
    assert order == sorted(order)


@pytest.mark.parametrize("world", [{"prompt_k": 3}], indirect=True)
async def test_text_the_prompt_already_carries_is_left_out(world: World) -> None:
    await world.say("s", *trip_conversation())
    history = (assistant(ACK, T0 + 99 * MINUTE), user("Lisbon trip plans?", T0 + 100 * MINUTE))
    block = await world.block("s", "what did I plan for the Lisbon trip?", history)
    assert body(block), block
    assert f"assistant: {ACK}" not in body(block)


@pytest.mark.parametrize("world", [{"prompt_k": 5, "prompt_tokens": 120}], indirect=True)
async def test_the_block_fits_its_token_budget_best_hit_first(world: World) -> None:
    long = " ".join(["the Lisbon trip itinerary"] * 40)
    await world.say(
        "s",
        user("The Lisbon trip code is LX-4411", T0),
        assistant(long, T0 + MINUTE),
        user(long, T0 + 2 * MINUTE),
    )
    block = await world.block("now", "The Lisbon trip code is LX-4411")
    assert estimate_text_tokens(block) <= 120, (estimate_text_tokens(block), block)
    assert "LX-4411" in block  # the best hit is kept; what does not fit is left out


@pytest.mark.parametrize("world", [{"prompt_k": 1, "prompt_tokens": 40}], indirect=True)
async def test_a_best_hit_longer_than_the_budget_is_clipped_not_dropped(world: World) -> None:
    await world.say("s", user("Lisbon " + "very long words " * 100, T0))
    block = await world.block("now", "Lisbon very long words")
    assert block, "the best hit alone must still reach the prompt"
    assert estimate_text_tokens(block) <= 40, block


async def test_prompt_tokens_is_validated() -> None:
    from aalis_plugin_memory_vector._config import MemoryVectorConfig

    with pytest.raises(ValueError, match="prompt_tokens"):
        MemoryVectorConfig(prompt_tokens=0)
