"""memory-vector's part in forgetting a person (``memory_forget``, docs/host/privacy.md).

After the store action erased the person (the code after ``call_next``), the vectors of the
person's private sessions go whole and the vectors of their messages in group sessions go
one by one; the person registry drops them, and the private sessions' entries. It goes
through the indexer, so a message of theirs still waiting in the queue is dropped too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aalis_api_memory import ForgetRequest

from aalis_plugin_memory_vector._indexer import Indexer
from aalis_plugin_memory_vector._persons import PersonRegistry


async def forget_vectors(
    name: str,
    indexer: Indexer | None,
    persons: PersonRegistry | None,
    caps: Any,
    request: ForgetRequest,
    call_next: Callable[[], Awaitable[None]],
) -> None:
    """The ``memory_forget`` middleware: pass on, then erase what was derived."""
    await call_next()
    if indexer is None or persons is None:
        return
    if not caps.vectorstore.present:
        if request.affected_sessions:
            request.report(name, False, "no vector store is active; vectors not erased")
        return
    deleted = 0
    for sid in request.private_sessions:
        deleted += await indexer.clear(sid)
    for sid, messages in request.group_messages.items():
        # By id: another person's vector in the same millisecond stays.
        stamps = [m.timestamp for m in messages if m.timestamp is not None]
        deleted += await indexer.forget(sid, stamps, [m.id for m in messages if m.id])
    person = (request.person.platform, request.person.user_id)
    entries = 0
    if caps.memory.present:
        entries = await persons.forget(person, request.private_sessions)
    request.report(
        name,
        True,
        f"{deleted} vectors erased",
        {"vectors": deleted, "registry_entries": entries},
    )


__all__ = ["forget_vectors"]
