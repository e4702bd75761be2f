"""Export: writing a store's sessions and metadata as an export file, as they are read.

``export_sessions`` streams: each session is read (``export_session``) and its lines are
written to the output before the next session is read, and metadata is read and written one
namespace at a time, so memory follows the largest session, not the store. Nothing is
written before the checks that can refuse the export (a missing extension, an unknown
session) have passed. ``atomic_output`` gives a file that appears only when the export
completed, so a failure half-way leaves no half file (standard output cannot be taken back:
lines already written stay written).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol

from aalis_api_memory import MemoryService, MetadataKeys, StoredMessage, supports

from aalis_memory_tools._export_format import (
    TransferError,
    dumps,
    header,
    message_line,
    metadata_line,
)
from aalis_memory_tools._transfer.reports import ExportReport
from aalis_memory_tools._transfer.stores import require


class TextOutput(Protocol):
    """Where an export goes: anything with ``write(str)`` (an open text file, ``sys.stdout``)."""

    def write(self, text: str, /) -> object: ...


async def read_metadata(
    service: MemoryService, namespaces: Iterable[str], unreadable: list[str] | None = None
) -> dict[tuple[str, str], dict[str, Any]]:
    """Every readable metadata entry of ``namespaces``; unreadable keys go to ``unreadable``."""
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for namespace in namespaces:
        readable = await service.list_metadata(namespace)
        for entry in readable:
            entries[(namespace, entry.key)] = entry.data
        if unreadable is not None and supports(service, MetadataKeys, "list_metadata_keys"):
            seen = {entry.key for entry in readable}
            keys = await service.list_metadata_keys(namespace)
            unreadable.extend(f"{namespace}/{key}" for key in keys if key not in seen)
    return entries


def _write(out: TextOutput, line: dict[str, Any]) -> None:
    out.write(dumps(line) + "\n")


async def export_sessions(
    memory: MemoryService,
    out: TextOutput,
    *,
    provider: str | None = None,
    session_id: str | None = None,
) -> ExportReport:
    """Write an export of ``memory`` to ``out``, each session as soon as it is read.

    With ``session_id``: that session's messages only (a session with no messages is a
    ``TransferError``, and nothing is written). Without: every session (``list_sessions``
    order), then every readable metadata entry, namespace by namespace; entries that cannot
    be read (corrupt data) are left out and listed in ``report.unreadable``. ``provider``
    is recorded in the header and named in errors. A store lacking an extension the export
    needs is refused, naming it, before anything is written.
    """
    report = ExportReport()
    first: list[StoredMessage] | None = None
    if session_id is None:
        store = require(
            memory, provider, ["list_sessions", "export_session", "list_namespaces"], "export"
        )
        infos = await store.list_sessions()
        session_ids = [info.session_id for info in infos]
    else:
        store = require(memory, provider, ["export_session"], "export")
        session_ids = [session_id]
        first = await store.export_session(session_id)
        if not first:
            raise TransferError(
                f"session {session_id!r} has no messages in "
                f"{'the store' if provider is None else repr(provider)} "
                "(`aalis sessions` lists them)"
            )
    _write(out, header(provider, "all" if session_id is None else "session"))
    for sid in session_ids:
        records: list[StoredMessage] = (
            first if first is not None else await store.export_session(sid)
        )
        report.sessions += 1
        report.messages += len(records)
        for record in records:
            _write(out, message_line(sid, record))
    if session_id is None:
        namespaces = await store.list_namespaces()
        for namespace in dict.fromkeys(namespaces):  # one namespace in memory at a time
            entries = await read_metadata(memory, [namespace], report.unreadable)
            report.metadata += len(entries)
            for (ns, key), data in entries.items():
                _write(out, metadata_line(ns, key, data))
    return report


class _Lines:
    """A ``TextOutput`` keeping the lines written, without their newline."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str, /) -> object:
        self.lines.append(text.removesuffix("\n"))
        return len(text)


async def export_lines(
    service: MemoryService, provider: str | None, session_id: str | None
) -> tuple[Iterator[str], ExportReport]:
    """The lines of an export, collected in memory (small stores, tests).

    ``export_sessions`` writes the same lines to an output as it reads them; use it for
    anything that may be large.
    """
    collected = _Lines()
    report = await export_sessions(service, collected, provider=provider, session_id=session_id)
    return iter(collected.lines), report


@contextmanager
def atomic_output(path: Path | str) -> Iterator[IO[str]]:
    """A text file that replaces ``path`` only when the ``with`` block completes.

    It is written as a temporary file next to ``path`` and renamed over it at the end, so a
    failure leaves the previous file (or none) and no half file.
    """
    path = Path(path)
    directory = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomically(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` to ``path`` through a temporary file, so a failure leaves no half file."""
    with atomic_output(path) as out:
        for line in lines:
            out.write(line + "\n")


__all__ = [
    "TextOutput",
    "atomic_output",
    "export_lines",
    "export_sessions",
    "read_metadata",
    "write_atomically",
]
