"""The exact commit, for a backend with exact archiving (docs/compression.md, "Exactness
under concurrency" and "Self-healing after a crash").

Archiving by message identity, with the summary entry as the guard of the same commit, is
what makes two compressions of one snapshot (two processes, two hosts) commit at most once,
and a compression whose session was cleared meanwhile commit nothing; positions cannot say
that across processes.
"""

from __future__ import annotations

import uuid
from typing import Any

from aalis_api_memory import (
    ArchiveConflict,
    CompressionError,
    ExactArchiving,
    MetadataGuard,
    ReasonCode,
)

from aalis_plugin_memory_summary._commit import (
    CommitPlan,
    Committer,
    Snapshot,
    Step,
    Undo,
    divider,
    no_step,
)
from aalis_plugin_memory_summary._error_text import error_text
from aalis_plugin_memory_summary._jobs import Job
from aalis_plugin_memory_summary._records import (
    PENDING_NAMESPACE,
    SUMMARY_NAMESPACE,
    pending_ids,
    pending_to_json,
    record_to_json,
    revision_of,
)


class ExactCommitter(Committer):
    """Archive exactly the snapshot's messages the summary covers, or nothing.

    The summary entry is the guard: it must still hold what this compression read, so of
    two compressions of one snapshot only the first commits, and one whose session was
    cleared meanwhile commits nothing. The ids go into a pending entry first: if the commit
    stops after the summary was written but before the archive (a crash, MongoDB's archive
    failing part-way), the next compression finds them there (``covered_ids``) and archives
    them as already summarised.
    """

    def __init__(self, memory: ExactArchiving, logger: Any, step: Step = no_step) -> None:
        super().__init__(memory, logger, step)
        self._exact = memory

    async def read(self, session_id: str) -> Snapshot:
        taken = await self._exact.history_snapshot(session_id)
        return Snapshot(tuple(taken.messages), tuple(taken.ids))

    def same_prefix(self, taken: Snapshot, current: Snapshot) -> bool:
        # By identity: a message rewritten in place keeps its position but not its id.
        return current.ids[: len(taken.ids)] == taken.ids

    async def covered_ids(
        self, session_id: str, summary_data: dict[str, Any] | None
    ) -> frozenset[str]:
        revision = revision_of(summary_data)
        if revision is None:
            return frozenset()
        return pending_ids(await self._exact.get_metadata(PENDING_NAMESPACE, revision), session_id)

    async def commit(self, job: Job, plan: CommitPlan) -> int:
        sid = job.session_id
        snapshot, ids = plan.snapshot.messages, plan.snapshot.ids
        keep = set(plan.kept)
        positions = sorted({i for i in range(plan.split) if i not in keep} | set(plan.healed))
        archive_ids = [ids[i] for i in positions]
        revision = uuid.uuid4().hex
        data = record_to_json(plan.record, revision=revision)
        last = snapshot[plan.split - 1] if plan.split > 0 else snapshot[max(plan.healed)]
        marker = divider(last, len(archive_ids), len(keep), plan.record.model)
        undo = Undo(job)
        async with self.hold(sid):
            await self.check_unchanged(job, plan.snapshot)
            try:
                await self._exact.save_metadata(
                    PENDING_NAMESPACE, revision, pending_to_json(sid, archive_ids)
                )
            except Exception as exc:
                raise CompressionError(
                    "archive_failed", f"summary not saved: {error_text(exc)}"
                ) from exc

            async def forget_pending() -> None:
                await self._forget_pending(revision)

            undo.push(forget_pending)
            await self._step("pending-saved")
            await undo.if_cancelled(f"session {sid!r} was cleared")
            guard = MetadataGuard(
                namespace=SUMMARY_NAMESPACE, key=sid, expected=plan.previous_data, data=data
            )
            try:
                archived = int(
                    await self._exact.archive_exact(sid, archive_ids, guard=guard, marker=marker)
                )
            except ArchiveConflict as exc:
                await undo.unwind()
                code: ReasonCode = "history_changed"
                if job.cancelled or not await self._history_left(sid):
                    code = "cleared"
                raise CompressionError(
                    code, f"the history of {sid!r} changed before the commit: {exc}"
                ) from None
            except Exception as exc:
                # The summary may be saved with only part of the archive done (MongoDB has no
                # transaction): the pending entry stays so the next compression finishes it.
                raise CompressionError("archive_failed", error_text(exc)) from exc
            await self._step("archived")
        job.committed = True
        await self._forget_pending(revision)
        if plan.healed:
            old = revision_of(plan.previous_data)
            if old is not None:
                await self._forget_pending(old)
        return archived

    async def _history_left(self, session_id: str) -> bool:
        """Whether the session still has active messages (True when that cannot be read):
        a refused guard on an emptied session was a clear, not a second compression."""
        try:
            return bool(await self._exact.get_history(session_id, 1))
        except Exception:
            return True

    async def _forget_pending(self, revision: str) -> None:
        try:
            await self._exact.delete_metadata(PENDING_NAMESPACE, revision)
        except Exception as exc:  # a leftover entry only names ids; the next commit ignores it
            self._log.warning("pending archive entry not removed", error=error_text(exc))


__all__ = ["ExactCommitter"]
