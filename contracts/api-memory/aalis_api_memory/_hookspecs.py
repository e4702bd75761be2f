"""The hooks of the memory contract, published through the ``aalis.hookspecs`` entry point.

The host adds these specs before it loads any plugin, so a plugin implementing a memory hook
is checked against them (a misspelt hook is a load error, not a silent no-op) while
``aalis_core`` itself never imports this contract.

Three shapes live here; each hook has its section in docs/reference/hooks.md (a test keeps
the page and these specs in step). The agent's hooks (``prompt_contributions``,
``token_usage``) are ``aalis_agent``'s.

* middleware: ``memory_clear`` and ``memory_forget`` (async, Koa-style onions, run by
  ``host.run_middleware``);
* contributions: ``memory_clear_types`` (sync, collected by ``host.collect_contributions``);
* events: notifications emitted with ``await host.emit(name, **payload)``; an
  implementation may be sync or async, and an exception in one never reaches the emitter.
  Events tell; they are never a way to orchestrate.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from aalis_schema_message import Message

from aalis_api_memory._clearing import ClearRequest, ClearType
from aalis_api_memory._forgetting import ForgetRequest
from aalis_core import hookspec

CompressingStatus = Literal["start", "done", "error"]


@hookspec
async def memory_clear(request: ClearRequest, call_next: Callable[[], Awaitable[None]]) -> None:
    """Take part in a clear: clear what you own that ``request`` covers, report, pass on.

    Code before ``await call_next()`` runs on the way in, code after it on the way out; the
    history clear is the innermost action. Append one ``ClearResult`` per clear type you
    handled (``request.wants(type_id)`` tells whether this clear covers it). Raising does not
    break the chain: the runner records a failure row for you and carries on. Returning
    without calling ``call_next`` deliberately stops the clear for everyone inside you.
    """


@hookspec
async def memory_forget(request: ForgetRequest, call_next: Callable[[], Awaitable[None]]) -> None:
    """Take part in forgetting ``request.person`` (docs/host/privacy.md).

    The innermost action erases the person from the memory store and fills
    ``request.private_sessions`` (cleared whole) and ``request.group_messages`` (the
    person's messages deleted from each group session), so what you derived from those goes
    after ``await call_next()``. Report one row with counts (``request.report``). Raising
    does not break the chain: the runner records a failure row for you and carries on.
    """


@hookspec
def memory_clear_types() -> list[ClearType]:
    """The clear types this plugin can clear; ids are non-empty and contain no ``/``.

    The same id from two plugins is one type (the first label collected wins), so a plugin
    may share ``context`` with the backends.
    """
    return []


@hookspec
def memory_messages_deleted(
    session_id: str, timestamps: Sequence[int], ids: Sequence[str]
) -> Awaitable[None] | None:
    """These messages of ``session_id`` were deleted (archived ones too).

    ``ids`` names them (``Message.id``); a listener keys on ids, since two messages may
    share a millisecond. ``timestamps`` are theirs too, for listeners of stores without
    identity (``ids`` is then empty and the timestamps are all there is).
    """


@hookspec
def memory_messages_rewritten(
    session_id: str, messages: Sequence[Message]
) -> Awaitable[None] | None:
    """These messages of ``session_id`` were rewritten in place; ids and timestamps are
    unchanged."""


@hookspec
def memory_messages_saved(session_id: str, messages: Sequence[Message]) -> Awaitable[None] | None:
    """These conversation messages of ``session_id`` were saved, as stored (timestamps and
    ids filled).

    Emitted by whoever saved them: the chat after each save, ``aalis import`` once per
    session it wrote. Derived indexes (a vector store) follow it.
    """


@hookspec
def history_changed(session_id: str) -> Awaitable[None] | None:
    """The structure of ``session_id``'s history changed (clear, compression, rollback).

    Anything derived from the history (a compression snapshot, a cache) is now stale.
    """


@hookspec
def session_compressing(session_id: str, status: CompressingStatus) -> Awaitable[None] | None:
    """A compression of ``session_id`` started (``start``), committed (``done``) or failed
    (``error``); emitted only once a compression really starts."""


#: The event names, for emitters and tests that want to check a name.
EVENTS: tuple[str, ...] = (
    "memory_messages_saved",
    "memory_messages_deleted",
    "memory_messages_rewritten",
    "history_changed",
    "session_compressing",
)

__all__ = [
    "EVENTS",
    "CompressingStatus",
    "history_changed",
    "memory_clear",
    "memory_clear_types",
    "memory_forget",
    "memory_messages_deleted",
    "memory_messages_rewritten",
    "memory_messages_saved",
    "session_compressing",
]
