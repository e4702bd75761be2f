"""HeldMemory: the adapter every memory provider is wrapped in (session holds)."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any

import pytest
from aalis_api_memory import HeldMemory, StoredMessage
from aalis_plugin_memory_inmemory import InMemoryMemory
from aalis_schema_message import Message


def outside(coro: Coroutine[Any, Any, Any], context: contextvars.Context) -> asyncio.Task[Any]:
    """Start ``coro`` as if from another part of the program, not from inside a hold."""
    return asyncio.create_task(coro, context=context.copy())


def said(content: str) -> Message:
    return Message(role="user", content=content)


async def contents(held: HeldMemory, sid: str) -> list[str | None]:
    return [m.content for m in await held.get_history(sid)]


class SlowStore(InMemoryMemory):
    """The real store, with a save that takes a while (to catch one in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def save_message(self, session_id: str, message: Message) -> None:
        await self.release.wait()
        await super().save_message(session_id, message)


class WithoutOptional:
    """A minimal store: only what it has is visible through the adapter."""

    async def save_message(self, session_id: str, message: Message) -> None:
        pass


def test_optional_methods_stay_detectable() -> None:
    held = HeldMemory(InMemoryMemory())
    assert hasattr(held, "count_history")
    assert hasattr(held, "import_messages")
    assert held.range_query_limit == 500
    bare = HeldMemory(WithoutOptional())
    assert not hasattr(bare, "count_history")
    assert not hasattr(bare, "import_messages")
    assert hasattr(bare, "hold")


def test_wrapping_twice_wraps_once() -> None:
    store = InMemoryMemory()
    assert HeldMemory(HeldMemory(store)).inner is store


async def test_a_held_session_waits_other_sessions_do_not() -> None:
    held = HeldMemory(InMemoryMemory())
    program = contextvars.copy_context()
    async with held.hold(["a"]):
        waiting = outside(held.save_message("a", said("later")), program)
        await outside(held.save_message("b", said("now")), program)
        await asyncio.sleep(0.01)
        assert not waiting.done()
        assert await contents(held, "a") == []
        assert held.is_held("a")
        assert not held.is_held("b")
    await waiting
    assert await contents(held, "a") == ["later"]
    assert not held.is_held("a")


async def test_holding_everything() -> None:
    held = HeldMemory(InMemoryMemory())
    program = contextvars.copy_context()
    async with held.hold(None):
        tasks = [outside(held.save_message(sid, said(sid)), program) for sid in "xyz"]
        await asyncio.sleep(0.01)
        assert not any(task.done() for task in tasks)
    await asyncio.gather(*tasks)
    for sid in "xyz":
        assert await contents(held, sid) == [sid]


async def test_overlapping_holds_release_when_the_last_ends() -> None:
    held = HeldMemory(InMemoryMemory())
    program = contextvars.copy_context()
    first_done = asyncio.Event()
    second_may_end = asyncio.Event()

    async def second() -> None:
        async with held.hold(["a"]):
            await first_done.wait()
            await second_may_end.wait()

    async with held.hold(["a", "b"]):
        other = outside(second(), program)
        await asyncio.sleep(0)
        waiting = outside(held.save_message("a", said("a")), program)
        b_waiting = outside(held.save_message("b", said("b")), program)
    first_done.set()
    await b_waiting  # only the first hold covered b
    await asyncio.sleep(0.01)
    assert not waiting.done()
    second_may_end.set()
    await other
    await waiting
    assert await contents(held, "a") == ["a"]


async def test_writes_from_inside_the_hold_pass() -> None:
    # The clear's own middleware, and tasks it starts, must not wait for their own hold.
    held = HeldMemory(InMemoryMemory())
    async with held.hold(["a"]):
        await asyncio.wait_for(held.save_message("a", said("own")), timeout=1)
        await asyncio.wait_for(
            asyncio.gather(*(held.save_message("a", said(f"child{i}")) for i in range(2))),
            timeout=1,
        )
    assert await contents(held, "a") == ["own", "child0", "child1"]


async def test_a_nested_hold_from_another_clear_still_holds_outsiders() -> None:
    held = HeldMemory(InMemoryMemory())
    program = contextvars.copy_context()
    async with held.hold(["a"]), held.hold(None):
        waiting = outside(held.save_message("z", said("z")), program)
        await held.save_message("z", said("own"))
        await asyncio.sleep(0.01)
        assert not waiting.done()
    await waiting
    assert await contents(held, "z") == ["own", "z"]


async def test_a_hold_waits_for_a_write_already_under_way() -> None:
    store = SlowStore()
    held = HeldMemory(store)
    writing = asyncio.create_task(held.save_message("a", said("in flight")))
    await asyncio.sleep(0.01)
    entered = asyncio.Event()

    async def clear() -> list[str | None]:
        async with held.hold(["a"]):
            entered.set()
            return await contents(held, "a")

    clearing = asyncio.create_task(clear())
    await asyncio.sleep(0.01)
    assert not entered.is_set()
    store.release.set()
    await writing
    assert await clearing == ["in flight"]


async def test_import_messages_waits_too() -> None:
    held = HeldMemory(InMemoryMemory())
    program = contextvars.copy_context()
    async with held.hold(["a"]):
        importing = outside(held.import_messages("a", [StoredMessage(said("x"))]), program)
        await asyncio.sleep(0.01)
        assert not importing.done()
    assert await importing == 1


async def test_bad_input_fails_at_once_even_when_held() -> None:
    held = HeldMemory(InMemoryMemory())
    async with held.hold(None):
        with pytest.raises(TypeError):
            await asyncio.wait_for(held.save_message(1, said("x")), timeout=1)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await asyncio.wait_for(held.save_message("a", "text"), timeout=1)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await asyncio.wait_for(held.import_messages(None, []), timeout=1)
    with pytest.raises(TypeError):
        async with held.hold("ab"):
            pass
    with pytest.raises(TypeError):
        async with held.hold([1]):  # type: ignore[list-item]
            pass
    assert not held.is_held("a")


async def test_a_failing_block_releases_its_hold() -> None:
    held = HeldMemory(InMemoryMemory())
    with pytest.raises(RuntimeError):
        async with held.hold(["a"]):
            raise RuntimeError("boom")
    await asyncio.wait_for(held.save_message("a", said("x")), timeout=1)


def test_holds_work_across_event_loops() -> None:
    held = HeldMemory(InMemoryMemory())

    async def once(text: str) -> Any:
        program = contextvars.copy_context()
        async with held.hold(["a"]):
            task = outside(held.save_message("a", said(text)), program)
            await asyncio.sleep(0)
            assert not task.done()
        await task

    asyncio.run(once("first"))
    asyncio.run(once("second"))
    assert asyncio.run(contents(held, "a")) == ["first", "second"]
