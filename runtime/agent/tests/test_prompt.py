"""Prompt contributions: collected from every plugin, in order, each contributor contained."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aalis_agent import PromptBlock, PromptRequest, collect_prompt_blocks, insert_prompt_blocks
from aalis_schema_message import Message

from aalis_core import Plugin, hookimpl


def contributor(name: str, behaviour: Callable[[PromptRequest], Any]) -> Plugin:
    class Contributor(Plugin):
        @hookimpl
        async def prompt_contributions(self, request: PromptRequest) -> Any:
            result = behaviour(request)
            if asyncio.iscoroutine(result):
                return await result
            return result

    Contributor.name = name
    return Contributor()


REQUEST = PromptRequest(session_id="s", query="where do I live?", platform="cli")


async def test_blocks_come_from_every_contributor_in_order_with_their_source(
    make_host: Callable[..., Any],
) -> None:
    first = contributor("first", lambda r: [PromptBlock(content=f"one for {r.session_id}")])
    second = contributor("second", lambda r: [PromptBlock(content="two", source="first")])
    async with make_host(first, second) as host:
        blocks = await collect_prompt_blocks(host, REQUEST)
    assert [(b.source, b.content) for b in blocks] == [("first", "one for s"), ("second", "two")]


async def test_a_raising_slow_or_garbled_contributor_is_skipped_and_the_rest_go_on(
    make_host: Callable[..., Any],
) -> None:
    async def slow(request: PromptRequest) -> list[PromptBlock]:
        await asyncio.sleep(30)
        return [PromptBlock(content="too late")]

    def exits(request: PromptRequest) -> Any:
        raise SystemExit(3)

    plugins = [
        contributor("raises", lambda r: 1 / 0),
        contributor("exits", exits),
        contributor("slow", slow),
        contributor("garbled", lambda r: "not a list of blocks"),
        contributor("mixed", lambda r: [PromptBlock(content="x"), "y"]),
        contributor("empty", lambda r: [PromptBlock(content="   ")]),
        contributor("fine", lambda r: [PromptBlock(content="kept")]),
    ]
    async with make_host(*plugins) as host:
        blocks = await collect_prompt_blocks(host, REQUEST, limit_s=0.2)
    assert [(b.source, b.content) for b in blocks] == [("fine", "kept")]


async def test_a_bad_time_limit_is_refused(make_host: Callable[..., Any]) -> None:
    async with make_host() as host:
        for bad in (0, -1, float("nan"), True, "5"):
            with pytest.raises(ValueError, match="limit_s"):
                await collect_prompt_blocks(host, REQUEST, limit_s=bad)  # type: ignore[arg-type]


def test_a_request_checks_its_types() -> None:
    with pytest.raises(TypeError):
        PromptRequest(session_id=1, query="q")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        PromptBlock(content=None)  # type: ignore[arg-type]


def test_blocks_go_after_the_history_and_before_the_last_user_message() -> None:
    prompt = [
        Message(role="system", content="sys"),
        Message(role="user", content="a"),
        Message(role="assistant", content="b"),
        Message(role="user", content="c"),
    ]
    block = PromptBlock(content="recalled", source="recall")
    placed = insert_prompt_blocks(prompt, [block])
    assert [m.content for m in placed] == ["sys", "a", "b", "recalled", "c"]
    assert placed[3].metadata == {"prompt_contribution": "recall"}
    assert insert_prompt_blocks(prompt, []) == prompt
    no_user = [Message(role="system", content="sys")]
    assert [m.content for m in insert_prompt_blocks(no_user, [block])] == ["sys", "recalled"]
