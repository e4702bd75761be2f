"""How a compression writes its result: the ``Committer`` interface, and what both commits
share (docs/compression.md, "Exactness under concurrency").

The summary model runs with nothing written; the commit is the short sequence after it. Two
implementations: ``commit_exact.ExactCommitter`` for a backend with exact archiving (archive by
message identity, the summary entry as guard) and ``commit_positional.PositionalCommitter``
for one without (save the summary, ``archive_span``). A committer also reads the snapshot,
because what it archives by (ids, or positions) has to be read with the messages.

Both commits check the job between their steps: a clear or forget that arrived meanwhile
means what was written must be taken back. That path is ``Undo``, one for both: each step
that writes pushes how to take itself back, and a cancelled job (or a refused write) unwinds
the stack. ``Step`` names the points between the steps; the plugin awaits a no-op there, a
test passes a callable that stops the commit (or kills the process) at one of them.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import attrs
from aalis_api_memory import (
    CompressionError,
    Holding,
    MemoryService,
    ReasonCode,
    SummaryRecord,
    supports,
)
from aalis_schema_message import Message

from aalis_plugin_memory_summary._error_text import error_text
from aalis_plugin_memory_summary._jobs import Job

#: Awaited with the name of each point a commit passes ("pending-saved", "archived" on the
#: exact commit; "summary-saved" on the positional one).
Step = Callable[[str], Awaitable[None]]


async def no_step(name: str) -> None:
    """The ``Step`` of normal use: a commit runs straight through."""


@attrs.frozen
class Snapshot:
    """The active history as a compression read it; ``ids`` only from exact archiving."""

    messages: tuple[Message, ...]
    ids: tuple[str, ...] = ()


@attrs.frozen
class CommitPlan:
    """What one compression commits: the summary, and which messages of the snapshot stay.

    ``split``: messages before it are summarised (but ``kept``); ``healed``: positions the
    stored summary already covers (a commit that stopped half-way), archived with this one.
    ``previous_data``: the summary entry as read before the model ran (the guard, and what
    an undo restores).
    """

    snapshot: Snapshot
    split: int
    kept: tuple[int, ...]
    healed: tuple[int, ...]
    record: SummaryRecord
    previous_data: dict[str, Any] | None


def divider(last: Message, archived: int, kept: int, model: str) -> Message:
    """The marker left in the active history where the archived messages were."""
    return Message(
        role="notice",
        kind="event-marker",
        content=f"[{archived} earlier messages compressed into the summary]",
        timestamp=last.timestamp,
        metadata={"event": "compression", "archived": archived, "kept": kept, "model": model},
    )


class Undo:
    """The one "cancelled -> undo" path of both commits.

    A commit pushes, after each write, the action that takes it back. ``if_cancelled`` is
    called between steps; ``unwind`` directly when a write is refused. Undo actions log
    their own failures: taking one write back must not stop taking back the others.
    """

    def __init__(self, job: Job) -> None:
        self._job = job
        self._actions: list[Callable[[], Awaitable[None]]] = []

    def push(self, action: Callable[[], Awaitable[None]]) -> None:
        """Register how to take back the write just done."""
        self._actions.append(action)

    async def unwind(self) -> None:
        """Take back every registered write, newest first."""
        while self._actions:
            await self._actions.pop()()

    async def if_cancelled(self, message: str) -> None:
        """When the job was cancelled: take back what was written and fail with ``cleared``."""
        if self._job.cancelled:
            await self.unwind()
            raise CompressionError("cleared", message)


class Committer(ABC):
    """Reads a session's snapshot and commits a compression of it.

    ``step`` is awaited at the named points of ``commit`` (``Step``).
    """

    def __init__(self, memory: MemoryService, logger: Any, step: Step = no_step) -> None:
        self._memory = memory
        self._log = logger
        self._step = step

    @abstractmethod
    async def read(self, session_id: str) -> Snapshot:
        """The active history, with whatever this commit archives by."""

    @abstractmethod
    def same_prefix(self, taken: Snapshot, current: Snapshot) -> bool:
        """Whether ``current`` still begins with ``taken`` (appended messages are fine)."""

    async def covered_ids(
        self, session_id: str, summary_data: dict[str, Any] | None
    ) -> frozenset[str]:
        """Ids the stored summary covers whose archive was never confirmed (none by default)."""
        return frozenset()

    @abstractmethod
    async def commit(self, job: Job, plan: CommitPlan) -> int:
        """Write the summary and archive its span; returns how many messages were archived.

        Raises ``CompressionError`` (``cleared``, ``history_changed``, ``read_failed``,
        ``archive_failed``) having taken back what it wrote, except where the docs say a
        half-done commit is finished by the next compression instead.
        """

    def hold(self, session_id: str) -> AbstractAsyncContextManager[None]:
        """Hold the session on the memory handle (saves from elsewhere wait) while committing.

        A save that lands between the pre-commit check and the archive could otherwise sit
        inside the archived span (an older platform timestamp) without being summarised.
        """
        if supports(self._memory, Holding):
            return self._memory.hold([session_id])
        return contextlib.nullcontext()

    async def check_unchanged(self, job: Job, taken: Snapshot) -> None:
        """The pre-commit check: the job is not marked and the history still starts with
        ``taken``, else ``cleared`` / ``history_changed`` and nothing is written."""
        sid = job.session_id
        if job.cancelled:
            raise CompressionError("cleared", f"session {sid!r} was cleared during the compression")
        if job.changed:
            raise CompressionError(
                "history_changed", f"the history of {sid!r} changed during the compression"
            )
        try:
            current = await self.read(sid)
        except Exception as exc:
            raise CompressionError("read_failed", error_text(exc)) from exc
        if job.cancelled:
            raise CompressionError("cleared", f"session {sid!r} was cleared during the compression")
        if not self.same_prefix(taken, current):
            code: ReasonCode = "cleared" if not current.messages else "history_changed"
            raise CompressionError(code, f"the history of {sid!r} changed during the compression")


__all__ = [
    "CommitPlan",
    "Committer",
    "Snapshot",
    "Step",
    "Undo",
    "divider",
    "no_step",
]
