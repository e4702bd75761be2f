"""What memory-summary does when the host tells it something: a ``token_usage`` that may
start an automatic compression, and a ``memory_clear`` that cancels running jobs and clears
summaries (docs/compression.md, "Automatic compression" and "Clearing").

The plugin's hookimpls (``plugin.py``) only route here, so the hooks stay thin and these
functions can be driven with a service directly. The ``memory_forget`` middleware is in
``forgetting.py``; the events that only mark a job stale go straight to ``JobRegistry``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aalis_api_memory import (
    CONTEXT,
    ClearRequest,
    CompressionError,
    CompressionUsage,
    TextRef,
    clear_metadata_namespaces,
    compression_due,
)

from aalis_plugin_memory_summary._error_text import error_text
from aalis_plugin_memory_summary._records import (
    PENDING_NAMESPACE,
    SUMMARY_NAMESPACE,
    revision_of,
)

if TYPE_CHECKING:
    from aalis_plugin_memory_summary._jobs import Job
    from aalis_plugin_memory_summary._service import SummaryCompression

#: The id of the clear type this plugin contributes (``aalis clear -t summary``); the
#: ``ClearType`` itself, with its label, is built in ``plugin.py``.
SUMMARY_CLEAR_TYPE_ID = "summary"


async def on_token_usage(
    service: SummaryCompression, session_id: object, platform: object, usage: object
) -> asyncio.Task[None] | None:
    """Start one background compression when the session's lines are crossed.

    Returns the task it started (tests await it), or None. Nothing is started while the
    session runs or is being checked, while its back-off lasts, or once the host stops:
    an agent reports usage after every model call, and each report must not pile up runs.
    """
    if not isinstance(session_id, str) or not isinstance(usage, CompressionUsage):
        return None
    if isinstance(platform, str) and platform:
        service.remember_platform(session_id, platform)
    else:
        platform = None
    jobs, log = service.jobs, service.log
    if jobs.closing or jobs.busy(session_id):
        return None
    if service.backoff.blocked(session_id):
        log.debug(
            "auto compression backing off",
            session_id=session_id,
            remaining_s=round(service.backoff.remaining(session_id), 1),
        )
        return None
    with jobs.checking(session_id):
        try:
            lines = await service.session_lines(session_id, platform)
        except Exception as exc:
            log.warning("compression lines not read", session_id=session_id, error=error_text(exc))
            return None
    if not compression_due(usage, lines):
        return None
    # The lines were read with an await: re-check what may have changed meanwhile.
    if jobs.closing or jobs.running(session_id) or service.backoff.blocked(session_id):
        return None
    job = jobs.claim(session_id, "auto", platform)
    job.seen_messages = usage.history_messages
    return jobs.spawn(_auto(service, job), name=f"aalis-compress-{session_id}")


async def _auto(service: SummaryCompression, job: Job) -> None:
    """One automatic compression: its failures are logged, never raised into the loop."""
    try:
        await service.execute(job)
    except CompressionError:
        pass  # logged by ``execute``
    except Exception as exc:
        service.log.error(
            "auto compression crashed",
            session_id=job.session_id,
            error=error_text(exc),
            exc_info=exc,
        )


async def on_clear(
    service: SummaryCompression, request: ClearRequest, call_next: Callable[[], Awaitable[None]]
) -> None:
    """The ``memory_clear`` middleware: cancel, pass on, then clear summaries.

    Cancelling first: a job that commits after the history was cleared would bring back
    a summary of a conversation the user asked to forget.
    """
    wants_summary = request.wants(SUMMARY_CLEAR_TYPE_ID)
    touches_history = request.wants(CONTEXT) or wants_summary
    sessions: set[str] | None = None if request.scope == "all" else {str(request.session_id)}
    if touches_history:
        service.cancel(sessions, wants_summary)
    await call_next()
    if not wants_summary:
        return
    if not service.memory.present:
        request.report(
            service.name,
            False,
            TextRef(
                "memory-summary.clear.unavailable",
                "Summary not cleared: no memory provider is bound",
            ),
            SUMMARY_CLEAR_TYPE_ID,
        )
        return
    try:
        memory = service.memory.use
        if sessions is None:
            deleted = await clear_metadata_namespaces(
                memory, [SUMMARY_NAMESPACE, PENDING_NAMESPACE], service.log
            )
            count = len(deleted[0]) if deleted else 0
            message = TextRef("memory-summary.clear.all", f"Summaries cleared ({count} sessions)")
        else:
            sid = str(request.session_id)
            revision = revision_of(await memory.get_metadata(SUMMARY_NAMESPACE, sid))
            await memory.delete_metadata(SUMMARY_NAMESPACE, sid)
            if revision is not None:
                await memory.delete_metadata(PENDING_NAMESPACE, revision)
            message = TextRef("memory-summary.clear.session", "Summary cleared")
    except Exception as exc:
        request.report(
            service.name,
            False,
            TextRef("memory-summary.clear.failed", f"Summary not cleared: {error_text(exc)}"),
            SUMMARY_CLEAR_TYPE_ID,
        )
        return
    request.report(service.name, True, message, SUMMARY_CLEAR_TYPE_ID)


__all__ = ["SUMMARY_CLEAR_TYPE_ID", "on_clear", "on_token_usage"]
