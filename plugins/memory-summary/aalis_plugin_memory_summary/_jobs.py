"""The registry of compression jobs: which sessions are being compressed, and what made a
job's snapshot stale while it ran (docs/compression.md, "The algorithm").

A job exists from the moment its compression is claimed until it has committed or failed.
The claim is synchronous, so a second request for the session sees ``busy`` at once instead
of racing the first to the store; the release is in the caller's ``finally``, so a failure
never leaves the session locked. A clear, a forget or an edit of the history only *marks* the
job; the commit reads the marks between its steps (``commit.py``), because cancelling the
job's task could stop a commit half-way.

The registry also owns the asyncio side of the jobs (automatic compressions run as tasks,
commits run shielded) so that stopping the host can wait for both.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Iterable, Iterator
from typing import Any, TypeVar

import attrs
from aalis_api_memory import CompressionError

T = TypeVar("T")


@attrs.define(eq=False)
class Job:
    """One compression of one session, and the marks that make its snapshot stale."""

    session_id: str
    reason: str
    platform: str | None
    #: A clear or forget asked for the session while this job ran (-> ``cleared``).
    cancelled: bool = False
    #: Whether the clear that cancelled the job also cleared summaries: the undo of a
    #: written summary then deletes it instead of restoring the previous one.
    clears_summary: bool = False
    #: An event said the history changed (-> ``history_changed``).
    changed: bool = False
    #: Set once the commit is done: later events no longer concern this job.
    committed: bool = False
    #: Active conversation messages the triggering ``token_usage`` described (0: unknown).
    seen_messages: int = 0


class JobRegistry:
    """The running jobs of one ``SummaryCompression``, one per session at most."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        #: Sessions whose lines an automatic trigger is reading (before any claim): a second
        #: ``token_usage`` for the session meanwhile must not start a second check.
        self._checking: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._commits: set[asyncio.Future[Any]] = set()
        #: Set by ``close``: no automatic compression starts after it.
        self.closing = False

    def running(self, session_id: str) -> bool:
        """True while a compression of ``session_id`` is in flight."""
        return session_id in self._jobs

    def busy(self, session_id: str) -> bool:
        """Running, or being checked by an automatic trigger."""
        return session_id in self._jobs or session_id in self._checking

    @contextlib.contextmanager
    def checking(self, session_id: str) -> Iterator[None]:
        """Mark ``session_id`` busy while an automatic trigger reads its lines."""
        self._checking.add(session_id)
        try:
            yield
        finally:
            self._checking.discard(session_id)

    def claim(self, session_id: str, reason: str, platform: str | None) -> Job:
        """A new job for ``session_id``, or ``busy`` when one runs already."""
        if session_id in self._jobs:
            raise CompressionError("busy", f"session {session_id!r} is already being compressed")
        job = Job(session_id, reason, platform)
        self._jobs[session_id] = job
        return job

    def release(self, job: Job) -> None:
        """Forget ``job`` (a later job of the session, if any, stays)."""
        if self._jobs.get(job.session_id) is job:
            del self._jobs[job.session_id]

    def cancel(self, sessions: Iterable[str] | None, clears_summary: bool) -> None:
        """Mark the jobs of ``sessions`` (every job when None) cancelled."""
        wanted = None if sessions is None else set(sessions)
        for job in self._jobs.values():
            if wanted is None or job.session_id in wanted:
                job.cancelled = True
                job.clears_summary = job.clears_summary or clears_summary

    def note_changed(self, session_id: object) -> None:
        """An event said the history of ``session_id`` changed: its job's snapshot is stale."""
        job = self._jobs.get(session_id) if isinstance(session_id, str) else None
        if job is not None and not job.committed:
            job.changed = True

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Run an automatic compression in the background; ``close`` waits for it."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def shielded(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a commit to its end even when the job's task is cancelled meanwhile.

        Cancelling a commit between its steps could leave a summary without its archive;
        the caller still sees the cancellation, and ``close`` waits for the commit.
        """
        commit = asyncio.ensure_future(work)
        self._commits.add(commit)
        commit.add_done_callback(self._commits.discard)
        return await asyncio.shield(commit)

    async def close(self, grace: float) -> None:
        """Stop starting compressions; let running ones finish (up to ``grace``), cancel the rest.

        A commit already under way always completes: it is shielded and awaited here.
        """
        self.closing = True
        tasks = set(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._commits:
            await asyncio.gather(*self._commits, return_exceptions=True)


__all__ = ["Job", "JobRegistry"]
