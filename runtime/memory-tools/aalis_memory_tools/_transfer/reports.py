"""What an export, an import or a migration did: the reports the engine returns.

They are plain counters, so a caller (the ``aalis`` commands, a script) words its own
summary; ``plural`` is the one helper both the engine's messages and the commands use to
write a count with its noun.
"""

from __future__ import annotations

import attrs
from aalis_api_memory import StoredMessage


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions`` (``many`` for irregular plurals: ``entries``)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


@attrs.define
class ExportReport:
    """What an export wrote."""

    sessions: int = 0
    messages: int = 0
    metadata: int = 0
    #: ``namespace/key`` of entries that could not be read (corrupt data) and were left out
    unreadable: list[str] = attrs.field(factory=list)


@attrs.define
class WriteReport:
    """What an import or a migration wrote (or found already there)."""

    sessions_written: int = 0
    sessions_skipped: int = 0
    messages_written: int = 0
    metadata_written: int = 0
    metadata_skipped: int = 0
    changed_sessions: list[str] = attrs.field(factory=list)


@attrs.frozen
class OversizeMessage:
    """A source message larger than the target stores (MongoDB: 16 MiB per document)."""

    session_id: str
    timestamp: int | None
    size: int
    record: StoredMessage

    def describe(self) -> str:
        return (
            f"session {self.session_id!r} message at timestamp {self.timestamp} ({self.size} bytes)"
        )


@attrs.define
class MigrateReport(WriteReport):
    """What a migration copied, on top of what it wrote (``WriteReport``)."""

    source: str | None = None
    target: str | None = None
    sessions: int = 0
    messages: int = 0
    archived: int = 0
    metadata: int = 0
    namespaces: int = 0
    unreadable: list[str] = attrs.field(factory=list)
    #: messages left out because the target cannot store them (``--skip-oversize``)
    oversize: list[OversizeMessage] = attrs.field(factory=list)


__all__ = ["ExportReport", "MigrateReport", "OversizeMessage", "WriteReport", "plural"]
