"""The positional commit, for a backend without exact archiving (docs/compression.md,
"Exactness under concurrency").

Save the summary, then ``archive_span`` by position, then the divider. Exact within this
process (the session is held from the check to the archive), not across processes: that
needs the backend's ``archive_exact``. A backend that offers only the base contract still
gets compression this way.
"""

from __future__ import annotations

import math
from typing import Any

from aalis_api_memory import CompressionError, FullHistory, Rewrite, supports
from aalis_schema_message import Message

from aalis_plugin_memory_summary._commit import (
    CommitPlan,
    Committer,
    Snapshot,
    Undo,
    divider,
)
from aalis_plugin_memory_summary._error_text import error_text
from aalis_plugin_memory_summary._jobs import Job
from aalis_plugin_memory_summary._records import SUMMARY_NAMESPACE, record_to_json


class PositionalCommitter(Committer):
    """Commit by position: the summary first, so a crash never archives unsummarised messages."""

    async def read(self, session_id: str) -> Snapshot:
        return Snapshot(tuple(await self._memory.get_history(session_id, math.inf)))

    def same_prefix(self, taken: Snapshot, current: Snapshot) -> bool:
        return current.messages[: len(taken.messages)] == taken.messages

    async def commit(self, job: Job, plan: CommitPlan) -> int:
        sid = job.session_id
        cleared = f"session {sid!r} was cleared during the compression"
        undo = Undo(job)
        async with self.hold(sid):
            await self.check_unchanged(job, plan.snapshot)
            try:
                await self._memory.save_metadata(
                    SUMMARY_NAMESPACE, sid, record_to_json(plan.record)
                )
            except Exception as exc:
                raise CompressionError(
                    "archive_failed", f"summary not saved: {error_text(exc)}"
                ) from exc

            async def undo_summary() -> None:
                # A clear that also clears summaries wants none left; a history-only clear
                # (or a failed archive) keeps the summary that was there before.
                previous = None if job.clears_summary else plan.previous_data
                await self._restore_summary(sid, previous)

            undo.push(undo_summary)
            await self._step("summary-saved")
            await undo.if_cancelled(cleared)
            try:
                archived = await self._memory.archive_span(sid, plan.split, plan.kept)
            except Exception as exc:
                await undo.unwind()
                raise CompressionError("archive_failed", error_text(exc)) from exc
        await undo.if_cancelled(cleared)

        last = plan.snapshot.messages[plan.split - 1]
        marker = divider(last, archived, len(plan.kept), plan.record.model)
        try:
            await self._memory.save_message(sid, marker)
        except Exception as exc:  # the compression itself is committed; only the marker is missing
            self._log.warning(
                "compression divider not saved", session_id=sid, error=error_text(exc)
            )
        else:
            if job.cancelled:
                await self._retract_divider(sid, marker)
        job.committed = True
        return archived

    async def _restore_summary(self, sid: str, previous_data: dict[str, Any] | None) -> None:
        try:
            if previous_data is None:
                await self._memory.delete_metadata(SUMMARY_NAMESPACE, sid)
            else:
                await self._memory.save_metadata(SUMMARY_NAMESPACE, sid, previous_data)
        except Exception as exc:
            self._log.error("previous summary not restored", session_id=sid, error=error_text(exc))

    async def _retract_divider(self, sid: str, marker: Message) -> None:
        """Remove a divider that waited out a clear's hold and landed in the cleared session.

        Only the divider itself: a message saved after the clear at the same millisecond
        stays (then the divider does too).
        """
        memory = self._memory
        if (
            not supports(memory, Rewrite, "delete_messages_by_timestamps")
            or marker.timestamp is None
        ):
            return
        rewrite = memory
        if not supports(memory, FullHistory, "get_full_history"):
            return
        try:
            same_time = [
                m
                for m in await memory.get_full_history(sid, math.inf)
                if m.timestamp == marker.timestamp
            ]
            if same_time and all(
                m.kind == marker.kind and m.content == marker.content for m in same_time
            ):
                await rewrite.delete_messages_by_timestamps(sid, [marker.timestamp])
        except Exception as exc:
            self._log.warning(
                "stray compression divider not removed", session_id=sid, error=error_text(exc)
            )


__all__ = ["PositionalCommitter"]
