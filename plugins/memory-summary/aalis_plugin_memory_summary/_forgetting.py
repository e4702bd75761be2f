"""memory-summary's part in forgetting a person (``memory_forget``, docs/host/privacy.md).

A summary is made of what people said, so one may quote the person being forgotten. After
the store action (the code after ``call_next``): the summary of each of the person's private
sessions is dropped (the session is gone); the summary of each group session they spoke in is
recomputed from the archived messages that remain, with the offline extractive summariser
(no model is asked: nothing is sent anywhere while erasing someone), or dropped when nothing
remains. Every such summary is recomputed, whether or not it quoted them: telling a
paraphrase from a quote is not something to guess at here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aalis_api_memory import (
    ForgetRequest,
    MemoryService,
    SummaryRecord,
    Transfer,
    supports,
)
from aalis_schema_message import CONTROL_KINDS, now_ms

from aalis_plugin_memory_summary._ids import EXTRACTIVE_ID
from aalis_plugin_memory_summary._records import (
    PENDING_NAMESPACE,
    SUMMARY_NAMESPACE,
    record_from_json,
    record_to_json,
    revision_of,
)

if TYPE_CHECKING:
    from aalis_plugin_memory_summary._service import SummaryCompression

SUMMARISED_ROLES = frozenset({"user", "assistant"})


async def _drop(memory: MemoryService, sid: str) -> bool:
    data = await memory.get_metadata(SUMMARY_NAMESPACE, sid)
    if data is None:
        return False
    revision = revision_of(data)
    await memory.delete_metadata(SUMMARY_NAMESPACE, sid)
    if revision is not None:
        await memory.delete_metadata(PENDING_NAMESPACE, revision)
    return True


async def _recompute(memory: MemoryService, sid: str) -> str:
    """``"recomputed"``, ``"dropped"`` or ``"none"`` (the session had no summary)."""
    data = await memory.get_metadata(SUMMARY_NAMESPACE, sid)
    if record_from_json(data) is None:
        return "dropped" if await _drop(memory, sid) else "none"
    if not supports(memory, Transfer, "export_session"):
        await _drop(memory, sid)  # what remains cannot be told from what was archived
        return "dropped"
    remaining = [
        r.message
        for r in await memory.export_session(sid)
        if r.archived
        and r.message.role in SUMMARISED_ROLES
        and r.message.kind not in CONTROL_KINDS
        and isinstance(r.message.content, str)
        and r.message.content.strip()
    ]
    from aalis_plugin_memory_summary._extractive import summarise  # only a forget needs it

    items = [(m.role, str(m.content)) for m in remaining]
    text = await asyncio.to_thread(summarise, None, items) if items else ""
    if not text.strip():
        await _drop(memory, sid)
        return "dropped"
    stamps = [m.timestamp for m in remaining if m.timestamp is not None]
    record = SummaryRecord(
        text=text,
        covered_from=min(stamps) if stamps else None,
        covered_to=max(stamps) if stamps else None,
        updated_at=now_ms(),
        model=EXTRACTIVE_ID,
    )
    stored = record_to_json(record, revision=revision_of(data))
    await memory.save_metadata(SUMMARY_NAMESPACE, sid, stored)
    return "recomputed"


async def forget_in_summaries(
    service: SummaryCompression,
    request: ForgetRequest,
    call_next: Callable[[], Awaitable[None]],
) -> None:
    """The ``memory_forget`` middleware of memory-summary."""
    # A compression running now may have read the person's words: it must not commit them.
    service.cancel(None, clears_summary=False)
    await call_next()
    if not request.affected_sessions:
        request.report(service.name, True, "no summary to change", {"recomputed": 0, "dropped": 0})
        return
    if not service.memory.present:
        request.report(service.name, False, "no memory provider is bound; summaries not changed")
        return
    memory = service.memory.use
    dropped = recomputed = 0
    try:
        for sid in request.private_sessions:
            dropped += await _drop(memory, sid)
        for sid in request.group_messages:
            outcome = await _recompute(memory, sid)
            recomputed += outcome == "recomputed"
            dropped += outcome == "dropped"
    except Exception as exc:
        request.report(
            service.name,
            False,
            f"summaries not all changed: {type(exc).__name__}: {exc}",
            {"recomputed": recomputed, "dropped": dropped},
        )
        return
    request.report(
        service.name,
        True,
        f"{recomputed} summaries recomputed without them, {dropped} dropped",
        {"recomputed": recomputed, "dropped": dropped},
    )


__all__ = ["forget_in_summaries"]
