"""``supports()``: a whole optional group, or just the methods a consumer calls.

A backend may offer part of a group (a third-party store with ``delete_messages_by_timestamps``
but no ``update_message_content``); every consumer that calls one method names it, so such a
backend keeps the features it had when each optional method was detected on its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from aalis_agent import undo_last_turn
from aalis_api_memory import FullHistory, HeldMemory, MemoryService, Rewrite, Transfer, supports
from aalis_plugin_memory_inmemory import InMemoryMemory
from aalis_schema_message import Message


class Without:
    """``store`` with some of its methods hidden (``getattr`` raises for them)."""

    def __init__(self, store: object, *hidden: str) -> None:
        self._store = store
        self._hidden = set(hidden)

    def __getattr__(self, name: str) -> Any:
        if name in self._hidden:
            raise AttributeError(name)
        return getattr(self._store, name)


def test_a_whole_group_is_seen_on_a_store_and_through_the_hold_adapter() -> None:
    store = InMemoryMemory()
    for service in (store, HeldMemory(store)):
        assert supports(service, Rewrite)
        assert supports(service, Transfer, "list_sessions")


def test_part_of_a_group_answers_for_the_methods_asked_about() -> None:
    partial = Without(InMemoryMemory(), "update_message_content")
    assert not supports(partial, Rewrite)
    assert supports(partial, Rewrite, "delete_messages_by_timestamps")
    assert not supports(partial, Rewrite, "update_message_content")
    assert not supports(None, FullHistory, "count_history")


def test_a_name_outside_the_group_or_a_group_without_methods_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="count_histroy"):
        supports(InMemoryMemory(), FullHistory, "count_histroy")
    with pytest.raises(TypeError, match="no method to check"):
        supports(InMemoryMemory(), MemoryService)


async def test_undo_works_on_a_backend_with_half_the_rewrite_group() -> None:
    store = InMemoryMemory()
    for i, (role, text) in enumerate([("user", "hi"), ("assistant", "hello")]):
        await store.save_message("s", Message(role=role, content=text, timestamp=1000 + i))
    emitted: list[str] = []

    async def emit(event: str, **payload: object) -> None:
        emitted.append(event)

    partial: Any = Without(store, "update_message_content")
    outcome = await undo_last_turn(partial, "s", emit)
    assert outcome.deleted == 2
    assert await store.get_history("s") == []
