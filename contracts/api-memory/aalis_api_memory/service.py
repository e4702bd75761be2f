"""``MemoryService``: the shape every memory backend implements.

The Protocol lists the required methods; optional ones are named in ``OPTIONAL_METHODS`` and
detected with ``hasattr`` (on a handle's ``use`` too), so a consumer can degrade gracefully and
the conformance kit can skip, with a reason, what a backend documents as absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from aalis_schema_message import Message

from aalis_api_memory.types import MetadataEntry, MetadataOp

Limit = int | float


@runtime_checkable
class MemoryService(Protocol):
    """Per-session chat history with archiving, plus a metadata key/value store.

    Every method is async. Limits are a non-negative int or ``math.inf``; ``None`` means the
    method's default. Optional methods (see ``OPTIONAL_METHODS``) are not part of the Protocol.
    """

    async def save_message(self, session_id: str, message: Message) -> None: ...

    async def get_history(self, session_id: str, limit: Limit | None = None) -> list[Message]: ...

    async def archive_span(
        self, session_id: str, count: Limit, keep: Sequence[int] = ()
    ) -> int: ...

    async def clear_session(self, session_id: str) -> None: ...

    async def save_metadata(self, namespace: str, key: str, data: dict[str, Any]) -> None: ...

    async def get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None: ...

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]: ...

    async def delete_metadata(self, namespace: str, key: str) -> None: ...

    async def commit_metadata(self, ops: Sequence[MetadataOp]) -> None: ...


#: Methods a backend may leave out; consumers check with ``hasattr``.
OPTIONAL_METHODS: tuple[str, ...] = (
    "count_history",
    "get_full_history",
    "clear_all",
    "get_messages_by_session_range",
    "get_recent_messages_across_sessions",
    "update_message_content",
    "delete_messages_by_timestamps",
    "list_metadata_keys",
    # Extensions of this project (docs/architecture.md):
    "list_sessions",
    "list_namespaces",
    "export_session",
    "import_messages",
    # Exact archiving (aalis_api_memory.exact, docs/reference/memory-contract.md):
    "history_snapshot",
    "archive_exact",
)

__all__ = ["OPTIONAL_METHODS", "Limit", "MemoryService"]
