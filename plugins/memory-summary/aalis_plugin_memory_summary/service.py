"""``SummaryCompression``: the ``compression`` capability (docs/compression.md).

One compression of a session runs as a *job*. The job exists from the moment the compression
is claimed (synchronously, so a second request for the session sees ``busy`` at once) until it
has committed or failed. Everything that could make its snapshot stale marks the job:

- this plugin's ``memory_clear`` middleware marks it ``cancelled`` (-> ``cleared``);
- ``memory_messages_deleted`` / ``memory_messages_rewritten`` / ``history_changed`` for the
  session mark it ``changed`` (-> ``history_changed``);
- and right before committing, the active history is read again: the snapshot must still be
  its prefix (messages appended meanwhile are fine; they stay after the split).

The summary model is the slow part and runs with nothing written; the commit is a short
sequence (summary, archive, divider) with the cancellation flag checked between steps, run
shielded so that stopping the host never leaves a summary without its archive.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, cast

import attrs
from aalis_api_llm import ChatModel
from aalis_api_memory import (
    CONTEXT,
    ArchiveConflict,
    ClearRequest,
    CompressionError,
    CompressionLines,
    CompressionUsage,
    ExactArchiving,
    FullHistory,
    Holding,
    MemoryService,
    MetadataGuard,
    ReasonCode,
    Rewrite,
    SummaryRecord,
    TextRef,
    check_session_id,
    clear_metadata_namespaces,
    compression_due,
    has_exact_archiving,
    supports,
)
from aalis_schema_message import Message, now_ms

from aalis_core.capability import CapabilityAbsent
from aalis_plugin_memory_summary.backoff import Backoff
from aalis_plugin_memory_summary.check import SummaryRejected
from aalis_plugin_memory_summary.config import (
    MemorySummaryConfig,
    check_non_negative_int,
    check_ratio,
)
from aalis_plugin_memory_summary.fallback import vetted
from aalis_plugin_memory_summary.prompt import ParsedReply
from aalis_plugin_memory_summary.records import (
    LINES_NAMESPACE,
    PENDING_NAMESPACE,
    SUMMARY_NAMESPACE,
    LineOverrides,
    overrides_from_json,
    pending_ids,
    pending_to_json,
    record_from_json,
    record_to_json,
    revision_of,
)
from aalis_plugin_memory_summary.spans import (
    KeepChoice,
    ToolGroup,
    conversation_positions,
    select_keep,
    tool_groups,
    turn_split,
)
from aalis_plugin_memory_summary.summarisers import (
    ExtractiveSummariser,
    LlmSummariser,
    Summariser,
)

if TYPE_CHECKING:
    from aalis_core.handles import Handle

#: The id of the clear type this plugin contributes (``aalis clear -t summary``); the
#: ``ClearType`` itself, with its label, is built in ``plugin.py``.
SUMMARY_CLEAR_TYPE_ID = "summary"
#: Failures that make automatic compression of the session wait (busy, a clear or a change
#: of the history say nothing about the summariser's health).
BACKOFF_REASONS: frozenset[str] = frozenset(
    {"unavailable", "read_failed", "model_failed", "archive_failed"}
)
#: Seconds ``aclose`` waits for running compressions before cancelling them.
STOP_GRACE = 10.0

Emit = Callable[..., Awaitable[None]]
#: Test seam: awaited at the named steps of a commit (a crash test kills the process there).
CommitHook = Callable[[str], Awaitable[None]]


@attrs.frozen
class CompressionOutcome:
    """What one compression did (``compress_detailed``); ``record`` None: nothing to do."""

    session_id: str
    reason: str
    model: str | None
    archived: int
    kept: tuple[int, ...]
    record: SummaryRecord | None


@attrs.define(eq=False)
class _Job:
    session_id: str
    reason: str
    platform: str | None
    cancelled: bool = False
    #: whether the clear that cancelled the job also cleared summaries
    clears_summary: bool = False
    changed: bool = False
    committed: bool = False
    #: Active conversation messages the triggering ``token_usage`` described (0: unknown).
    seen_messages: int = 0


def _error_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def platform_of(snapshot: Sequence[Message]) -> str | None:
    """The platform of the newest message that names one (``metadata["platform"]``)."""
    for message in reversed(snapshot):
        platform = (message.metadata or {}).get("platform")
        if isinstance(platform, str) and platform:
            return platform
    return None


class SummaryCompression:
    """The ``compression`` provider. Built by the plugin with its handles and config.

    ``clock`` (monotonic seconds) drives only the auto-compression back-off.
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
    ) -> None:
        self._memory = memory
        self._llm = llm
        self._emit_event = emit
        self._log = logger
        self._config = config if config is not None else MemorySummaryConfig()
        self._name = name
        self._jobs: dict[str, _Job] = {}
        self._checking: set[str] = set()
        self._platforms: dict[str, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._commits: set[asyncio.Future[Any]] = set()
        self._closing = False
        self.backoff = Backoff(clock)
        #: Test seam (``CommitHook``): None in normal use.
        self.commit_hook: CommitHook | None = None

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
        job = self._claim(session_id, reason, platform)
        return await self._execute(job)

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
        return session_id in self._jobs

    async def aclose(self, grace: float = STOP_GRACE) -> None:
        """Stop starting compressions; let running ones finish (up to ``grace``), cancel the rest.

        A commit already under way always completes: it is shielded and awaited here.
        """
        self._closing = True
        tasks = set(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._commits:
            await asyncio.gather(*self._commits, return_exceptions=True)

    # ------------------------------------------------------------------------------------
    # helpers
    # ------------------------------------------------------------------------------------

    def _memory_or_raise(self) -> MemoryService:
        try:
            return self._memory.use
        except CapabilityAbsent as exc:
            raise CompressionError("unavailable", f"no memory provider: {exc}") from None

    def _summariser_or_raise(self) -> Summariser:
        choice = self._config.summariser
        if choice == "extractive":
            return ExtractiveSummariser()
        if self._llm.present:
            try:
                model = self._llm.use
                model_id = str(model.id)
            except CapabilityAbsent:
                pass
            else:
                return LlmSummariser(model, model_id, max_reply_chars=self._config.max_reply_chars)
        if choice == "llm":
            raise CompressionError(
                "unavailable", 'summariser = "llm" but no llm provider is bound to memory-summary'
            )
        return ExtractiveSummariser()

    async def _overrides(self, session_id: str) -> LineOverrides:
        if not self._memory.present:
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
            self._log.warning("event not emitted", hook=event, error=_error_text(exc))

    def _claim(self, session_id: str, reason: str, platform: str | None) -> _Job:
        if session_id in self._jobs:
            raise CompressionError("busy", f"session {session_id!r} is already being compressed")
        job = _Job(session_id, reason, platform)
        self._jobs[session_id] = job
        return job

    def _release(self, job: _Job) -> None:
        if self._jobs.get(job.session_id) is job:
            del self._jobs[job.session_id]

    async def _execute(self, job: _Job) -> CompressionOutcome:
        sid = job.session_id
        try:
            outcome = await self._run(job)
        except CompressionError as exc:
            if exc.reason_code in BACKOFF_REASONS:
                delay = self.backoff.failed(sid)
                self._log.warning(
                    "compression failed",
                    session_id=sid,
                    reason=job.reason,
                    code=exc.reason_code,
                    error=exc.message,
                    auto_backoff_s=delay,
                )
            else:
                self._log.info(
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
            self._release(job)
        self.backoff.reset([sid])
        return outcome

    # ------------------------------------------------------------------------------------
    # the algorithm (docs/compression.md)
    # ------------------------------------------------------------------------------------

    async def _run(self, job: _Job) -> CompressionOutcome:
        sid = job.session_id
        memory = self._memory_or_raise()
        summariser = self._summariser_or_raise()
        exact = memory if has_exact_archiving(memory) else None
        try:
            ids: list[str] = []
            if exact is not None:
                taken = await exact.history_snapshot(sid)
                snapshot, ids = list(taken.messages), list(taken.ids)
            else:
                snapshot = list(await memory.get_history(sid, math.inf))
            previous_data = await memory.get_metadata(SUMMARY_NAMESPACE, sid)
            covered = (
                await self._covered_ids(memory, sid, previous_data)
                if exact is not None
                else frozenset()
            )
            platform = job.platform or self._platforms.get(sid) or platform_of(snapshot)
            history_limit = self._history_limit(await self._overrides(sid), platform)
        except CapabilityAbsent as exc:
            raise CompressionError("unavailable", f"memory went away: {exc}") from None
        except Exception as exc:
            raise CompressionError("read_failed", _error_text(exc)) from exc
        previous = record_from_json(previous_data)
        if _shrunk(job, snapshot):
            # The usage that triggered this run described a longer history: another process
            # (or host) compressed or cleared it since. What is left is not what crossed
            # the line; compressing it would summarise a handful of fresh messages.
            self._log.info(
                "auto compression skipped: the history shrank since its usage was measured",
                session_id=sid,
                measured=job.seen_messages,
                now=sum(1 for m in snapshot if not m.is_control),
            )
            return CompressionOutcome(sid, job.reason, None, 0, (), None)

        # Messages the stored summary already covers (a commit that stopped after saving the
        # summary): archived with this commit, never shown to the model again.
        healed = [i for i, ident in enumerate(ids) if ident in covered]
        # 1. The split: at a turn boundary, never inside a tool group.
        groups = tool_groups(snapshot)
        split = turn_split(snapshot, groups)
        skip = set(healed)
        positions = [p for p in conversation_positions(snapshot, 0, split) if p not in skip]
        if not positions and not healed:
            self._log.debug("nothing to compress", session_id=sid, reason=job.reason)
            return CompressionOutcome(sid, job.reason, None, 0, (), None)
        if job.cancelled:
            raise CompressionError("cleared", f"session {sid!r} was cleared")

        await self._emit("session_compressing", session_id=sid, status="start")
        self._log.info(
            "compressing",
            session_id=sid,
            reason=job.reason,
            model=summariser.id,
            messages=len(positions),
            already_summarised=len(healed),
            split=split,
        )
        try:
            if positions:
                text, choice, model_id = await self._summarise(
                    job, summariser, previous, snapshot, positions, split, groups, history_limit
                )
                kept = tuple(p for p in choice.positions if p not in skip)
                record = SummaryRecord(
                    text=text,
                    covered_from=(
                        previous.covered_from
                        if previous is not None and previous.covered_from is not None
                        else snapshot[positions[0]].timestamp
                    ),
                    covered_to=_latest(
                        previous.covered_to if previous is not None else None,
                        snapshot[positions[-1]].timestamp,
                    ),
                    updated_at=now_ms(),
                    model=model_id,
                )
            else:
                # Only healing: the summary already says everything; archive what it covers.
                assert previous is not None  # covered ids come from the stored summary
                kept, model_id, record = (), previous.model, previous

            # 5. Commit (shielded: cancelling the job never stops a commit half-way).
            if exact is not None:
                work = self._commit_exact(
                    job, exact, snapshot, ids, split, kept, healed, record, previous_data
                )
            else:
                work = self._commit(job, memory, snapshot, split, kept, record, previous_data)
            commit = asyncio.ensure_future(work)
            self._commits.add(commit)
            commit.add_done_callback(self._commits.discard)
            archived = await asyncio.shield(commit)
        except BaseException:  # a CompressionError, or the job's task being cancelled
            await self._emit("session_compressing", session_id=sid, status="error")
            raise

        self._log.info(
            "compressed",
            session_id=sid,
            reason=job.reason,
            model=model_id,
            archived=archived,
            kept=len(kept),
        )
        await self._emit("history_changed", session_id=sid)
        await self._emit("session_compressing", session_id=sid, status="done")
        return CompressionOutcome(sid, job.reason, model_id, archived, kept, record)

    async def _summarise(
        self,
        job: _Job,
        summariser: Summariser,
        previous: SummaryRecord | None,
        snapshot: Sequence[Message],
        positions: Sequence[int],
        split: int,
        groups: Sequence[ToolGroup],
        history_limit: int,
    ) -> tuple[str, KeepChoice, str]:
        """The summary text, the keep choice, and the id of the summariser that wrote it."""
        # 2. The summary model; nothing is written while it runs.
        reply: ParsedReply | None = None
        rejected: str | None = None
        try:
            async with asyncio.timeout(self._config.timeout):
                reply = await summariser.summarise(
                    previous.text if previous else None, snapshot, positions
                )
        except SummaryRejected as exc:
            rejected = exc.reason
        except TimeoutError:
            raise CompressionError(
                "model_failed",
                f"{summariser.id} gave no summary within {self._config.timeout:g} s",
            ) from None
        except Exception as exc:
            raise CompressionError("model_failed", f"{summariser.id}: {_error_text(exc)}") from exc
        if reply is not None and not reply.summary.strip():
            raise CompressionError("model_failed", f"{summariser.id} returned an empty summary")
        # A model summary that cannot carry its span is never committed (check.py).
        reply, model_id = await vetted(
            summariser,
            reply,
            previous.text if previous else None,
            snapshot,
            positions,
            on_rejected=self._config.on_rejected_summary,
            log=self._log,
            session_id=job.session_id,
            rejected=rejected,
        )
        # 3. The keep list, capped.
        choice = select_keep(
            snapshot,
            split,
            reply.keep,
            keep_ratio=self._config.keep_ratio,
            history_limit=history_limit,
            groups=groups,
        )
        return reply.summary.strip(), choice, model_id

    async def _covered_ids(
        self, memory: MemoryService, sid: str, summary_data: dict[str, Any] | None
    ) -> frozenset[str]:
        """Ids the stored summary covers but whose archive was never confirmed."""
        revision = revision_of(summary_data)
        if revision is None:
            return frozenset()
        return pending_ids(await memory.get_metadata(PENDING_NAMESPACE, revision), sid)

    async def _step(self, name: str) -> None:
        if self.commit_hook is not None:
            await self.commit_hook(name)

    def _hold(self, memory: MemoryService, sid: str) -> AbstractAsyncContextManager[None]:
        """Hold the session on the memory handle (saves from elsewhere wait) while committing.

        A save that lands between the pre-commit check and the archive could otherwise sit
        inside the archived span (an older platform timestamp) without being summarised.
        """
        if supports(memory, Holding):
            return memory.hold([sid])
        return contextlib.nullcontext()

    async def _check_unchanged(
        self,
        job: _Job,
        memory: MemoryService,
        snapshot: Sequence[Message],
        ids: Sequence[str] = (),
    ) -> None:
        sid = job.session_id
        if job.cancelled:
            raise CompressionError("cleared", f"session {sid!r} was cleared during the compression")
        if job.changed:
            raise CompressionError(
                "history_changed", f"the history of {sid!r} changed during the compression"
            )
        try:
            if ids:  # given only on the exact path
                taken = await cast(ExactArchiving, memory).history_snapshot(sid)
                current, current_ids = list(taken.messages), list(taken.ids)
                same = current_ids[: len(ids)] == list(ids)
            else:
                current = list(await memory.get_history(sid, math.inf))
                same = current[: len(snapshot)] == list(snapshot)
        except Exception as exc:
            raise CompressionError("read_failed", _error_text(exc)) from exc
        if job.cancelled:
            raise CompressionError("cleared", f"session {sid!r} was cleared during the compression")
        if not same:
            code: ReasonCode = "cleared" if not current else "history_changed"
            raise CompressionError(code, f"the history of {sid!r} changed during the compression")

    def _divider(self, last: Message, archived: int, kept: int, model: str) -> Message:
        return Message(
            role="notice",
            kind="event-marker",
            content=f"[{archived} earlier messages compressed into the summary]",
            timestamp=last.timestamp,
            metadata={"event": "compression", "archived": archived, "kept": kept, "model": model},
        )

    async def _commit_exact(
        self,
        job: _Job,
        memory: ExactArchiving,
        snapshot: Sequence[Message],
        ids: Sequence[str],
        split: int,
        kept: Sequence[int],
        healed: Sequence[int],
        record: SummaryRecord,
        previous_data: dict[str, Any] | None,
    ) -> int:
        """Archive exactly the snapshot's messages the summary covers, or nothing.

        The summary entry is the guard: it must still hold what this compression read, so
        of two compressions of one snapshot (two processes, two hosts) only the first
        commits, and one whose session was cleared meanwhile commits nothing. The ids go
        into a pending entry first: if the commit stops after the summary was written but
        before the archive (a crash, MongoDB's archive failing part-way), the next
        compression finds them there and archives them as already summarised.
        """
        sid = job.session_id
        keep = set(kept)
        positions = [i for i in range(split) if i not in keep]
        positions = sorted(set(positions) | set(healed))
        archive_ids = [ids[i] for i in positions]
        revision = uuid.uuid4().hex
        data = record_to_json(record, revision=revision)
        last = snapshot[split - 1] if split > 0 else snapshot[max(healed)]
        divider = self._divider(last, len(archive_ids), len(keep), record.model)
        async with self._hold(memory, sid):
            await self._check_unchanged(job, memory, snapshot, ids)
            try:
                await memory.save_metadata(
                    PENDING_NAMESPACE, revision, pending_to_json(sid, archive_ids)
                )
            except Exception as exc:
                raise CompressionError(
                    "archive_failed", f"summary not saved: {_error_text(exc)}"
                ) from exc
            await self._step("pending-saved")
            if job.cancelled:
                await self._forget_pending(memory, revision)
                raise CompressionError("cleared", f"session {sid!r} was cleared")
            guard = MetadataGuard(
                namespace=SUMMARY_NAMESPACE, key=sid, expected=previous_data, data=data
            )
            try:
                archived = int(
                    await memory.archive_exact(sid, archive_ids, guard=guard, marker=divider)
                )
            except ArchiveConflict as exc:
                await self._forget_pending(memory, revision)
                code: ReasonCode = "history_changed"
                if job.cancelled or not await self._has_history(memory, sid):
                    code = "cleared"
                raise CompressionError(
                    code, f"the history of {sid!r} changed before the commit: {exc}"
                ) from None
            except Exception as exc:
                # The summary may be saved with only part of the archive done (MongoDB has no
                # transaction): the pending entry stays so the next compression finishes it.
                raise CompressionError("archive_failed", _error_text(exc)) from exc
            await self._step("archived")
        job.committed = True
        await self._forget_pending(memory, revision)
        if healed:
            old = revision_of(previous_data)
            if old is not None:
                await self._forget_pending(memory, old)
        return archived

    async def _has_history(self, memory: MemoryService, sid: str) -> bool:
        try:
            return bool(await memory.get_history(sid, 1))
        except Exception:
            return True

    async def _forget_pending(self, memory: MemoryService, revision: str) -> None:
        try:
            await memory.delete_metadata(PENDING_NAMESPACE, revision)
        except Exception as exc:  # a leftover entry only names ids; the next commit ignores it
            self._log.warning("pending archive entry not removed", error=_error_text(exc))

    async def _commit(
        self,
        job: _Job,
        memory: MemoryService,
        snapshot: Sequence[Message],
        split: int,
        kept: Sequence[int],
        record: SummaryRecord,
        previous_data: dict[str, Any] | None,
    ) -> int:
        """The positional commit, for a backend without exact archiving.

        Exact within this process (the session is held from the check to the archive), not
        across processes: that needs the backend's ``archive_exact``.
        """
        sid = job.session_id
        async with self._hold(memory, sid):
            await self._check_unchanged(job, memory, snapshot)
            if job.cancelled:
                raise CompressionError(
                    "cleared", f"session {sid!r} was cleared during the compression"
                )
            try:
                await memory.save_metadata(SUMMARY_NAMESPACE, sid, record_to_json(record))
            except Exception as exc:
                raise CompressionError(
                    "archive_failed", f"summary not saved: {_error_text(exc)}"
                ) from exc
            await self._step("summary-saved")
            if job.cancelled:
                await self._undo_summary(job, memory, previous_data)
                raise CompressionError(
                    "cleared", f"session {sid!r} was cleared during the compression"
                )
            try:
                archived = await memory.archive_span(sid, split, kept)
            except Exception as exc:
                await self._restore_summary(memory, sid, previous_data)
                raise CompressionError("archive_failed", _error_text(exc)) from exc
        if job.cancelled:
            await self._undo_summary(job, memory, previous_data)
            raise CompressionError("cleared", f"session {sid!r} was cleared during the compression")

        divider = self._divider(snapshot[split - 1], archived, len(kept), record.model)
        try:
            await memory.save_message(sid, divider)
        except Exception as exc:  # the compression itself is committed; only the marker is missing
            self._log.warning(
                "compression divider not saved", session_id=sid, error=_error_text(exc)
            )
        else:
            if job.cancelled:
                await self._retract_divider(memory, sid, divider)
        job.committed = True
        return archived

    async def _restore_summary(
        self, memory: MemoryService, sid: str, previous_data: dict[str, Any] | None
    ) -> None:
        try:
            if previous_data is None:
                await memory.delete_metadata(SUMMARY_NAMESPACE, sid)
            else:
                await memory.save_metadata(SUMMARY_NAMESPACE, sid, previous_data)
        except Exception as exc:
            self._log.error("previous summary not restored", session_id=sid, error=_error_text(exc))

    async def _undo_summary(
        self, job: _Job, memory: MemoryService, previous_data: dict[str, Any] | None
    ) -> None:
        # A clear that also clears summaries wants none left; a history-only clear keeps the
        # summary that was there before this compression.
        await self._restore_summary(
            memory, job.session_id, None if job.clears_summary else previous_data
        )

    async def _retract_divider(self, memory: MemoryService, sid: str, divider: Message) -> None:
        """Remove a divider that waited out a clear's hold and landed in the cleared session."""
        if (
            not supports(memory, Rewrite, "delete_messages_by_timestamps")
            or divider.timestamp is None
        ):
            return
        rewrite = memory
        if not supports(memory, FullHistory, "get_full_history"):
            return
        try:
            same_time = [
                m
                for m in await memory.get_full_history(sid, math.inf)
                if m.timestamp == divider.timestamp
            ]
            if same_time and all(
                m.kind == divider.kind and m.content == divider.content for m in same_time
            ):
                await rewrite.delete_messages_by_timestamps(sid, [divider.timestamp])
        except Exception as exc:
            self._log.warning(
                "stray compression divider not removed", session_id=sid, error=_error_text(exc)
            )

    # ------------------------------------------------------------------------------------
    # hooks (called by the plugin's hookimpls)
    # ------------------------------------------------------------------------------------

    def note_changed(self, session_id: object) -> None:
        """An event said the history of ``session_id`` changed: stale snapshot."""
        job = self._jobs.get(session_id) if isinstance(session_id, str) else None
        if job is not None and not job.committed:
            job.changed = True

    async def on_token_usage(
        self, session_id: object, platform: object, usage: object
    ) -> asyncio.Task[Any] | None:
        """Start one background compression when the session's lines are crossed.

        Returns the task it started (tests await it), or None.
        """
        if not isinstance(session_id, str) or not isinstance(usage, CompressionUsage):
            return None
        if isinstance(platform, str) and platform:
            self._platforms[session_id] = platform
        else:
            platform = None
        if self._closing or session_id in self._jobs or session_id in self._checking:
            return None
        if self.backoff.blocked(session_id):
            self._log.debug(
                "auto compression backing off",
                session_id=session_id,
                remaining_s=round(self.backoff.remaining(session_id), 1),
            )
            return None
        self._checking.add(session_id)
        try:
            lines = await self.session_lines(session_id, platform)
        except Exception as exc:
            self._log.warning(
                "compression lines not read", session_id=session_id, error=_error_text(exc)
            )
            return None
        finally:
            self._checking.discard(session_id)
        if not compression_due(usage, lines):
            return None
        if self._closing or session_id in self._jobs or self.backoff.blocked(session_id):
            return None
        job = self._claim(session_id, "auto", platform)
        job.seen_messages = usage.history_messages
        task = asyncio.create_task(self._auto(job), name=f"aalis-compress-{session_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _auto(self, job: _Job) -> None:
        try:
            await self._execute(job)
        except CompressionError:
            pass  # logged by _execute
        except Exception as exc:
            self._log.error(
                "auto compression crashed",
                session_id=job.session_id,
                error=_error_text(exc),
                exc_info=exc,
            )

    async def on_clear(
        self, request: ClearRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        """The ``memory_clear`` middleware: cancel, pass on, then clear summaries."""
        wants_summary = request.wants(SUMMARY_CLEAR_TYPE_ID)
        touches_history = request.wants(CONTEXT) or wants_summary
        sessions: set[str] | None = None if request.scope == "all" else {str(request.session_id)}
        if touches_history:
            self._cancel(sessions, wants_summary)
        await call_next()
        if not wants_summary:
            return
        if not self._memory.present:
            request.report(
                self._name,
                False,
                TextRef(
                    "memory-summary.clear.unavailable",
                    "Summary not cleared: no memory provider is bound",
                ),
                SUMMARY_CLEAR_TYPE_ID,
            )
            return
        try:
            memory = self._memory.use
            if sessions is None:
                deleted = await clear_metadata_namespaces(
                    memory, [SUMMARY_NAMESPACE, PENDING_NAMESPACE], self._log
                )
                count = len(deleted[0]) if deleted else 0
                message = TextRef(
                    "memory-summary.clear.all", f"Summaries cleared ({count} sessions)"
                )
            else:
                sid = str(request.session_id)
                revision = revision_of(await memory.get_metadata(SUMMARY_NAMESPACE, sid))
                await memory.delete_metadata(SUMMARY_NAMESPACE, sid)
                if revision is not None:
                    await memory.delete_metadata(PENDING_NAMESPACE, revision)
                message = TextRef("memory-summary.clear.session", "Summary cleared")
        except Exception as exc:
            request.report(
                self._name,
                False,
                TextRef("memory-summary.clear.failed", f"Summary not cleared: {_error_text(exc)}"),
                SUMMARY_CLEAR_TYPE_ID,
            )
            return
        request.report(self._name, True, message, SUMMARY_CLEAR_TYPE_ID)

    def _cancel(self, sessions: Iterable[str] | None, clears_summary: bool) -> None:
        wanted = None if sessions is None else set(sessions)
        for job in self._jobs.values():
            if wanted is None or job.session_id in wanted:
                job.cancelled = True
                job.clears_summary = job.clears_summary or clears_summary
        self.backoff.reset(wanted)


def _shrunk(job: _Job, snapshot: Sequence[Message]) -> bool:
    """Whether the active history holds fewer conversation messages than the usage said."""
    if not job.seen_messages:
        return False
    return sum(1 for m in snapshot if not m.is_control) < job.seen_messages


def _latest(previous: int | None, newest: int | None) -> int | None:
    """The end of a cumulative summary's range: it never moves back.

    A save with an older timestamp (another process, a platform clock) can be the newest
    message a compression covers while the previous summary already reached further; the
    summary still covers what the previous one did.
    """
    if previous is None:
        return newest
    if newest is None:
        return previous
    return max(previous, newest)


__all__ = ["BACKOFF_REASONS", "CompressionOutcome", "SummaryCompression", "platform_of"]
