"""``SummaryCompression``: the ``compression`` capability (docs/compression.md).

One compression of a session runs as a *job* (``jobs.py``), from the moment it is claimed
(synchronously, so a second request for the session sees ``busy`` at once) until it has
committed or failed. A run reads the snapshot, computes the span and the summary with nothing
written (``algorithm.py``), then hands them to the committer for the backend (``commit.py``):
the exact one when the backend archives by identity, the positional one otherwise. The commit
runs shielded, so stopping the host never leaves a summary without its archive.

What makes a snapshot stale marks the job; the plugin's hooks do that (``handlers.py``,
``forgetting.py``), and the committer checks the marks between its steps.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from aalis_api_llm import ChatModel
from aalis_api_memory import (
    CompressionError,
    CompressionLines,
    MemoryService,
    SummaryRecord,
    check_session_id,
    has_exact_archiving,
)
from aalis_schema_message import Message

from aalis_core import CapabilityAbsent
from aalis_plugin_memory_summary._backoff import Backoff
from aalis_plugin_memory_summary._commit import CommitPlan, Committer, Step, no_step
from aalis_plugin_memory_summary._config import (
    MemorySummaryConfig,
    check_non_negative_int,
    check_ratio,
)
from aalis_plugin_memory_summary._error_text import error_text
from aalis_plugin_memory_summary._jobs import Job, JobRegistry
from aalis_plugin_memory_summary._records import (
    LINES_NAMESPACE,
    SUMMARY_NAMESPACE,
    LineOverrides,
    overrides_from_json,
    record_from_json,
)

if TYPE_CHECKING:
    from aalis_core import Handle

#: Failures that make automatic compression of the session wait (busy, a clear or a change
#: of the history say nothing about the summariser's health).
BACKOFF_REASONS: frozenset[str] = frozenset(
    {"unavailable", "read_failed", "model_failed", "archive_failed"}
)
#: Seconds ``aclose`` waits for running compressions before cancelling them.
STOP_GRACE = 10.0

Emit = Callable[..., Awaitable[None]]


@attrs.frozen
class CompressionOutcome:
    """What one compression did (``compress_detailed``); ``record`` None: nothing to do."""

    session_id: str
    reason: str
    model: str | None
    archived: int
    kept: tuple[int, ...]
    record: SummaryRecord | None


def platform_of(snapshot: Sequence[Message]) -> str | None:
    """The platform of the newest message that names one (``metadata["platform"]``)."""
    for message in reversed(snapshot):
        platform = (message.metadata or {}).get("platform")
        if isinstance(platform, str) and platform:
            return platform
    return None


class SummaryCompression:
    """The ``compression`` provider. Built by the plugin with its handles and config.

    ``clock`` (monotonic seconds) drives only the auto-compression back-off. ``step`` is
    awaited at the named points of every commit (``commit.Step``): a no-op unless a test
    passes one to stop or kill a commit there.
    """

    def __init__(
        self,
        *,
        memory: Handle[MemoryService],
        llm: Handle[ChatModel],
        emit: Emit,
        logger: Any,
        config: MemorySummaryConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        name: str = "memory-summary",
        step: Step = no_step,
    ) -> None:
        #: The ``memory`` handle (the clear and forget handlers use it too).
        self.memory = memory
        self._llm = llm
        self._emit_event = emit
        self.log = logger
        self._config = config if config is not None else MemorySummaryConfig()
        #: The plugin's name, as clear and forget reports name it.
        self.name = name
        self._step = step
        self._platforms: dict[str, str] = {}
        self.jobs = JobRegistry()
        self.backoff = Backoff(clock)

    # ------------------------------------------------------------------------------------
    # the CompressionService protocol
    # ------------------------------------------------------------------------------------

    async def compress(self, session_id: str, reason: str = "manual") -> None:
        """Compress ``session_id`` now; resolves when committed (docs/compression.md)."""
        await self.compress_detailed(session_id, reason)

    async def compress_detailed(
        self, session_id: str, reason: str = "manual", *, platform: str | None = None
    ) -> CompressionOutcome:
        """``compress`` that also says what it did (used by ``aalis compress``)."""
        check_session_id(session_id)
        job = self.jobs.claim(session_id, reason, platform)
        return await self.execute(job)

    async def compress_at(self, session_id: str, platform: str | None = None) -> float | None:
        """Session override > platform profile > default; None when the line is 0 (off)."""
        check_session_id(session_id)
        return self._compress_at(await self._overrides(session_id), platform)

    async def history_limit(self, session_id: str, platform: str | None = None) -> int:
        """The count line with the same layering as ``compress_at``; 0 means off."""
        check_session_id(session_id)
        return self._history_limit(await self._overrides(session_id), platform)

    async def session_lines(self, session_id: str, platform: str | None = None) -> CompressionLines:
        """Both lines of a session, as ``compression_due`` takes them."""
        check_session_id(session_id)
        overrides = await self._overrides(session_id)  # one metadata read for both lines
        return CompressionLines(
            compress_at=self._compress_at(overrides, platform),
            history_limit=self._history_limit(overrides, platform),
        )

    async def summary(self, session_id: str) -> SummaryRecord | None:
        """The session's current cumulative summary, or None."""
        check_session_id(session_id)
        memory = self._memory_or_raise()
        return record_from_json(await memory.get_metadata(SUMMARY_NAMESPACE, session_id))

    async def set_session_lines(
        self, session_id: str, *, compress_at: float | None = None, history_limit: int | None = None
    ) -> None:
        """Store the session's own lines; None removes that override (the layers below apply).

        The call states the session's whole override: both values are written together.
        """
        check_session_id(session_id)
        overrides = LineOverrides(
            compress_at=check_ratio(compress_at, "compress_at")
            if compress_at is not None
            else None,
            history_limit=(
                check_non_negative_int(history_limit, "history_limit")
                if history_limit is not None
                else None
            ),
        )
        memory = self._memory_or_raise()
        data = overrides.to_json()
        if data:
            await memory.save_metadata(LINES_NAMESPACE, session_id, data)
        else:
            await memory.delete_metadata(LINES_NAMESPACE, session_id)

    # ------------------------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------------------------

    def running(self, session_id: str) -> bool:
        """True while a compression of ``session_id`` is in flight."""
        return self.jobs.running(session_id)

    def cancel(self, sessions: Iterable[str] | None, clears_summary: bool) -> None:
        """A clear or forget covers ``sessions`` (all when None): running jobs must not
        commit, and the back-off of those sessions starts over."""
        wanted = None if sessions is None else set(sessions)
        self.jobs.cancel(wanted, clears_summary)
        self.backoff.reset(wanted)

    def remember_platform(self, session_id: str, platform: str) -> None:
        """The platform a ``token_usage`` named: picks the session's profile in later runs."""
        self._platforms[session_id] = platform

    async def aclose(self, grace: float = STOP_GRACE) -> None:
        """Stop starting compressions; let running ones finish (up to ``grace``), cancel the rest.

        A commit already under way always completes: it is shielded and awaited here.
        """
        await self.jobs.close(grace)

    # ------------------------------------------------------------------------------------
    # helpers
    # ------------------------------------------------------------------------------------

    def _memory_or_raise(self) -> MemoryService:
        try:
            return self.memory.use
        except CapabilityAbsent as exc:
            raise CompressionError("unavailable", f"no memory provider: {exc}") from None

    def _committer(self, memory: MemoryService) -> Committer:
        """The exact commit when the backend archives by identity, else the positional one."""
        # The committers and the algorithm are imported by the first compression, not at
        # the plugin's start: every `aalis` command starts the plugin (docs/performance.md).
        from aalis_plugin_memory_summary._commit_exact import ExactCommitter
        from aalis_plugin_memory_summary._commit_positional import PositionalCommitter

        if has_exact_archiving(memory):
            return ExactCommitter(memory, self.log, self._step)
        return PositionalCommitter(memory, self.log, self._step)

    async def _overrides(self, session_id: str) -> LineOverrides:
        if not self.memory.present:
            return LineOverrides()
        memory = self._memory_or_raise()
        return overrides_from_json(await memory.get_metadata(LINES_NAMESPACE, session_id))

    def _compress_at(self, overrides: LineOverrides, platform: str | None) -> float | None:
        value = overrides.compress_at
        profile = self._config.platforms.get(platform) if platform else None
        if value is None and profile is not None:
            value = profile.compress_at
        if value is None:
            value = self._config.compress_at
        return value if value > 0 else None

    def _history_limit(self, overrides: LineOverrides, platform: str | None) -> int:
        value = overrides.history_limit
        profile = self._config.platforms.get(platform) if platform else None
        if value is None and profile is not None:
            value = profile.history_limit
        if value is None:
            value = self._config.history_limit
        return value

    async def _emit(self, event: str, **payload: Any) -> None:
        try:
            await self._emit_event(event, **payload)
        except Exception as exc:  # an emit that fails must not turn a commit into a failure
            self.log.warning("event not emitted", hook=event, error=error_text(exc))

    # ------------------------------------------------------------------------------------
    # one run
    # ------------------------------------------------------------------------------------

    async def execute(self, job: Job) -> CompressionOutcome:
        """Run a claimed job to its end, release it, and move the session's back-off."""
        sid = job.session_id
        try:
            outcome = await self._run(job)
        except CompressionError as exc:
            if exc.reason_code in BACKOFF_REASONS:
                delay = self.backoff.failed(sid)
                self.log.warning(
                    "compression failed",
                    session_id=sid,
                    reason=job.reason,
                    code=exc.reason_code,
                    error=exc.message,
                    auto_backoff_s=delay,
                )
            else:
                self.log.info(
                    "compression abandoned",
                    session_id=sid,
                    reason=job.reason,
                    code=exc.reason_code,
                    error=exc.message,
                )
            raise
        except Exception:
            self.backoff.failed(sid)
            raise
        finally:
            self.jobs.release(job)
        self.backoff.reset([sid])
        return outcome

    async def _run(self, job: Job) -> CompressionOutcome:
        """Read, compute (nothing written), commit: the steps of docs/compression.md."""
        from aalis_plugin_memory_summary._algorithm import (
            choose_span,
            draft,
            shrunk,
            summariser_for,
        )

        sid = job.session_id
        memory = self._memory_or_raise()
        summariser = summariser_for(self._config, self._llm)
        committer = self._committer(memory)
        try:
            taken = await committer.read(sid)
            previous_data = await memory.get_metadata(SUMMARY_NAMESPACE, sid)
            covered = await committer.covered_ids(sid, previous_data)
            platform = job.platform or self._platforms.get(sid) or platform_of(taken.messages)
            history_limit = self._history_limit(await self._overrides(sid), platform)
        except CapabilityAbsent as exc:
            raise CompressionError("unavailable", f"memory went away: {exc}") from None
        except Exception as exc:
            raise CompressionError("read_failed", error_text(exc)) from exc
        snapshot = taken.messages
        previous = record_from_json(previous_data)
        if shrunk(job.seen_messages, snapshot):
            # The usage that triggered this run described a longer history: compressing what
            # is left would summarise a handful of fresh messages.
            self.log.info(
                "auto compression skipped: the history shrank since its usage was measured",
                session_id=sid,
                measured=job.seen_messages,
                now=sum(1 for m in snapshot if not m.is_control),
            )
            return CompressionOutcome(sid, job.reason, None, 0, (), None)

        span = choose_span(snapshot, taken.ids, covered)
        if span.empty:
            self.log.debug("nothing to compress", session_id=sid, reason=job.reason)
            return CompressionOutcome(sid, job.reason, None, 0, (), None)
        if job.cancelled:
            raise CompressionError("cleared", f"session {sid!r} was cleared")

        await self._emit("session_compressing", session_id=sid, status="start")
        self.log.info(
            "compressing",
            session_id=sid,
            reason=job.reason,
            model=summariser.id,
            messages=len(span.positions),
            already_summarised=len(span.healed),
            split=span.split,
        )
        try:
            drafted = await draft(
                summariser,
                previous,
                snapshot,
                span,
                config=self._config,
                history_limit=history_limit,
                log=self.log,
                session_id=sid,
            )
            plan = CommitPlan(
                snapshot=taken,
                split=span.split,
                kept=drafted.kept,
                healed=span.healed,
                record=drafted.record,
                previous_data=previous_data,
            )
            # Shielded: cancelling the job never stops a commit half-way.
            archived = await self.jobs.shielded(committer.commit(job, plan))
        except BaseException:  # a CompressionError, or the job's task being cancelled
            await self._emit("session_compressing", session_id=sid, status="error")
            raise

        self.log.info(
            "compressed",
            session_id=sid,
            reason=job.reason,
            model=drafted.model_id,
            archived=archived,
            kept=len(drafted.kept),
        )
        await self._emit("history_changed", session_id=sid)
        await self._emit("session_compressing", session_id=sid, status="done")
        return CompressionOutcome(
            sid, job.reason, drafted.model_id, archived, drafted.kept, drafted.record
        )


__all__ = ["BACKOFF_REASONS", "CompressionOutcome", "SummaryCompression", "platform_of"]
