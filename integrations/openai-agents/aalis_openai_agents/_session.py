"""``AalisSession``: the OpenAI Agents SDK's ``Session`` over any Aalis memory provider.

An Agents SDK app passes ``session=AalisSession("user-42", host)`` to ``Runner.run`` instead
of ``SQLiteSession("user-42")`` and gains what the store behind Aalis offers: the backend
chosen in ``aalis.toml`` (SQLite, PostgreSQL, MongoDB), compression (archived turns replaced
by a summary), semantic recall, clears every plugin takes part in, ``aalis history`` /
``aalis serve`` / export / migrate over the same session (docs/integrations/openai-agents.md).

The session never opens a store itself: it reads and writes through a memory *handle* of a
running host (an ``aalis_core.Host`` started on the agent's loop, or a ``SyncHost`` whose
loop runs in its own thread), so the host's provider selection, pins and clear holds apply.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from aalis_agent import (
    SUMMARY_HEADER,
    PromptRequest,
    collect_prompt_blocks,
    host_and_bridge,
    report_usage,
    run_clear,
    save_conversation,
)
from aalis_api_memory import (
    AalisMemoryError,
    ClearResult,
    MemoryService,
    MessagesById,
    Person,
    Rewrite,
    compression,
    history_cleared,
    memory as memory_capability,
    supports,
)
from aalis_schema_message import Message

from aalis_openai_agents._convert import Item, item_to_message, message_to_items

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings

    from aalis_core import Handle

T = TypeVar("T")


def _session_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"the session id must be a non-empty string, got {value!r}")
    return value


def _limit(value: object) -> float:
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"limit must be an int or None, got {type(value).__name__}")
    return max(0, value)


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


class ClearFailed(AalisMemoryError, RuntimeError):
    """The history of the session was not cleared; ``rows`` are ``run_clear``'s results."""

    def __init__(self, message: str, rows: Sequence[ClearResult]) -> None:
        super().__init__(message)
        self.rows = list(rows)


class AalisSession:
    """One Aalis session as the Agents SDK sees it: a list of Responses-API input items.

    ``host`` is a started ``aalis_core.Host`` or ``aalis_agent.SyncHost``; ``memory``
    the handle to use (default: the host's own); ``platform`` and ``user_id`` name the person
    who speaks (stamped on every user item, which recall's ``user`` scope and forgetting a
    person go by). ``session_settings`` is the SDK's (its ``limit`` bounds ``get_items``).

    Items are the *active* history: what compression archived is gone from ``get_items``
    and comes back to the model as the summary through ``input_callback``.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        host: Any,
        *,
        memory: Handle[MemoryService] | None = None,
        platform: str | None = "openai-agents",
        user_id: str | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = _session_id(session_id)
        if user_id is not None and platform is None:
            raise ValueError("a user_id needs a platform: the person is (platform, user_id)")
        self.person = Person(platform, user_id) if user_id is not None and platform else None
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)
        self.platform = platform
        self.session_settings = session_settings
        # What input_callback put in front of the history this run (summary, recall): the
        # SDK hands the callback's extra items to add_items, and they must not be saved.
        self._injected: dict[str, int] = {}
        # The new input items input_callback saved itself (a person's turn): the SDK saves
        # them again right after the callback, and add_items skips them once.
        self._presaved: dict[str, int] = {}

    async def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    @property
    def _store(self) -> MemoryService:
        return self._memory.use

    # -- the Session protocol ---------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The newest ``limit`` items (all when None; the settings' limit when set), oldest
        first. Control markers and prompt contributions are never items."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        bound = _limit(limit)
        if bound == 0:
            return []

        async def read() -> list[Item]:
            stored = await self._store.get_history(self.session_id, bound)
            items = [item for m in stored for item in message_to_items(m)]
            return items if bound == math.inf else items[-int(bound) :]

        return cast("list[TResponseInputItem]", await self._run(read))

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Save ``items`` in order (each one message, with its own id and timestamp) and
        announce them (``memory_messages_saved``), so recall indexes them."""
        kept = _without(self._presaved, _without(self._injected, list(items)))
        converted = self._convert(kept)
        if not converted:
            return

        async def write() -> None:
            await save_conversation(self._store, self.session_id, converted, host=self._host)
            await self._report_count()

        await self._run(write)

    def _convert(self, items: list[Any]) -> list[Message]:
        converted = [item_to_message(item, platform=self.platform) for item in items]
        if self.person is None:
            return converted
        return [self.person.stamp(m, overwrite=False) if m.role == "user" else m for m in converted]

    async def _report_count(self) -> None:
        """Tell the compression provider how long the session is (``token_usage`` with the
        message count and no token figures), so its count line (memory-summary's
        ``history_limit``) compresses a long session in the background. The session sees no
        model call, so it never claims token usage it does not know."""
        await report_usage(
            self._host,
            self._store,
            self.session_id,
            self.platform,
            used=None,
            context_window=None,
        )

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the newest item (by its message id) and return it; None when the session
        has no active item. Announced as ``memory_messages_deleted`` (with the id) and
        ``history_changed``, so recall and summaries forget it too."""

        async def pop() -> Item | None:
            stored = await self._store.get_history(self.session_id, 1)
            newest = next((m for m in reversed(stored) if not m.is_control), None)
            if newest is None:
                return None
            await self._delete(newest)
            items = message_to_items(newest)
            return items[-1] if items else None

        return cast("TResponseInputItem | None", await self._run(pop))

    async def _delete(self, message: Message) -> None:
        store = self._store
        stamp = [message.timestamp] if message.timestamp is not None else []
        if message.id is not None and supports(store, MessagesById, "delete_messages_by_ids"):
            await store.delete_messages_by_ids(self.session_id, [message.id])
            ids = [message.id]
        elif supports(store, Rewrite, "delete_messages_by_timestamps"):
            everything = await store.get_history(self.session_id, math.inf)
            if sum(1 for m in everything if m.timestamp == message.timestamp) > 1:
                raise AalisMemoryError(
                    "cannot pop: another message shares the newest item's timestamp and this "
                    "store can delete only by timestamp"
                )
            await store.delete_messages_by_timestamps(self.session_id, stamp)
            ids = []
        else:
            raise AalisMemoryError(
                "the memory backend offers neither delete_messages_by_ids() nor "
                "delete_messages_by_timestamps(): items cannot be popped"
            )
        await self._host.emit(
            "memory_messages_deleted", session_id=self.session_id, timestamps=stamp, ids=ids
        )
        await self._host.emit("history_changed", session_id=self.session_id)

    async def clear_session(self) -> None:
        """Clear the session through ``run_clear``: every plugin's data for it goes (history,
        summary, vectors...). Raises ``ClearFailed`` when the history was not cleared."""
        await self.clear_rows()

    async def clear_rows(self) -> list[ClearResult]:
        """``clear_session()``, returning every plugin's result row."""

        async def clear() -> list[ClearResult]:
            rows = await run_clear(
                self._host, "session", session_id=self.session_id, memory=self._memory
            )
            if not history_cleared(rows):
                failed = "; ".join(f"{r.source}: {r.message}" for r in rows if not r.success)
                raise ClearFailed(f"session {self.session_id!r} was not cleared: {failed}", rows)
            return rows

        return await self._run(clear)

    # -- summary and recall for the model ---------------------------------------------------

    async def input_callback(
        self, history: list[TResponseInputItem], new_items: list[TResponseInputItem]
    ) -> list[TResponseInputItem]:
        """A ``RunConfig(session_input_callback=...)``: the summary of what compression
        archived and the blocks plugins contribute (recall) go in front of the history, as
        system items; then the history and the new input. Those items are never saved.

        With a person (``user_id``), the new input is saved first, as ``aalis chat``'s turn
        saves the question before it builds the prompt: recall's ``user`` scope knows a
        session's person from its stored messages, so the first turn of a new session would
        otherwise recall only itself. ``add_items`` then skips those items once."""
        query = _last_user_text(new_items) or _last_user_text(history) or ""
        early = self._convert(list(new_items)) if self.person is not None else []

        async def head() -> list[Item]:
            if early:
                await save_conversation(self._store, self.session_id, early, host=self._host)
            items: list[Item] = []
            summary = await self._summary()
            if summary:
                items.append({"role": "system", "content": SUMMARY_HEADER + summary})
            for block in await self._blocks(query, history, new_items):
                items.append({"role": "system", "content": block})
            return items

        front = await self._run(head)
        self._injected = _counts(front)
        self._presaved = _counts(new_items) if early else {}
        return [*cast("list[TResponseInputItem]", front), *history, *new_items]

    async def _summary(self) -> str | None:
        handle = self._host.capability(compression)
        if not handle.present:
            return None
        try:
            record = await handle.use.summary(self.session_id)
        except Exception:
            return None  # a turn never fails for a summary
        return record.text if record is not None else None

    async def _blocks(self, query: str, history: list[Any], new_items: list[Any]) -> list[str]:
        if not query:
            return []
        try:
            self._host.hook_impls("prompt_contributions")
        except ValueError:  # no loaded contract declares it
            return []
        shown = [
            Message(role=str(i.get("role")), content=_text(i))
            for i in [*history, *new_items]
            if isinstance(i, dict) and isinstance(i.get("role"), str) and _text(i)
        ]
        request = PromptRequest(
            session_id=self.session_id, query=query, platform=self.platform, history=shown
        )
        try:
            blocks = await collect_prompt_blocks(self._host, request)
        except Exception:
            return []
        return [b.content for b in blocks]

    def __repr__(self) -> str:
        return f"AalisSession(session_id={self.session_id!r})"


def _counts(items: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[_key(item)] = counts.get(_key(item), 0) + 1
    return counts


def _without(skip: dict[str, int], items: list[Any]) -> list[Any]:
    """``items`` less those ``skip`` counts (each skipped once; ``skip`` is consumed)."""
    if not skip:
        return items
    kept: list[Any] = []
    for item in items:
        key = _key(item)
        if skip.get(key, 0) > 0:
            skip[key] -= 1
            continue
        kept.append(item)
    return kept


def _text(item: dict[str, Any]) -> str | None:
    return item_to_message(item).content


def _last_user_text(items: Sequence[Any]) -> str | None:
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            text = _text(item)
            if text:
                return text
    return None


__all__ = ["AalisSession", "ClearFailed"]
