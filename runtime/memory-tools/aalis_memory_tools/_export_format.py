"""The export file format (JSON lines): writing its lines, and reading them as a stream.

The format (docs/host/export-import.md) is JSON lines, chosen because it streams, diffs and
greps well and every line stands alone:

- line 1, the header: ``{"format": "aalis-memory-export", "version": 1, ...}`` (``header``);
- one line per message, in history order: ``{"session_id", "archived", "message"}``, where
  ``message`` is ``Message.to_json()`` (``message_line``), its ``id`` included (files
  written before message identity have none; import names those records from the file,
  ``transfer.identity``);
- one line per metadata entry: ``{"namespace", "key", "data"}`` (``metadata_line``).

Writing is one line at a time (``dumps``), so an export never holds more than one session.

Why a streaming reader: ``aalis import`` must refuse a bad file *before* it writes
anything, yet a 300 MB export must not be held in memory (its parsed messages would take
four times that). So the file is read twice or three times, never kept:

1. ``scan_export`` checks every line with exactly the rules the backends apply at write time
   (``aalis_api_memory._validation``: text validity of every string, 64-bit timestamps,
   session ids), and keeps only per-session line counts and the metadata (small);
2. ``iter_sessions`` reads it again and yields one complete session at a time, so memory
   is bounded by the largest session, not by the file.

``parse_export`` holds a whole file instead, for small files and tests.

Every problem is a ``TransferError`` naming the file and the line (``FILE line N: ...``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import attrs
from aalis_api_memory import (
    AalisMemoryError,
    StoredMessage,
    check_key,
    check_message,
    check_namespace,
    check_session_id,
    encode_metadata,
)
from aalis_schema_message import Message, now_ms

#: ``format`` of the header line.
FORMAT = "aalis-memory-export"
#: Version of the file format this module writes; it reads this version and older.
FORMAT_VERSION = 1

_MESSAGE_KEYS = frozenset({"session_id", "archived", "message"})
_METADATA_KEYS = frozenset({"namespace", "key", "data"})


class TransferError(AalisMemoryError, ValueError):
    """A user-facing problem of export, import or migrate: one line, nothing written."""


Bad = Callable[[str], TransferError]


@attrs.define
class ExportSummary:
    """What a checked export file holds, without its messages."""

    header: dict[str, Any]
    #: session id -> number of message lines, in order of first appearance
    session_counts: dict[str, int] = attrs.field(factory=dict)
    #: (namespace, key) -> data, in file order
    metadata: dict[tuple[str, str], dict[str, Any]] = attrs.field(factory=dict)

    @property
    def message_count(self) -> int:
        return sum(self.session_counts.values())


Record = tuple[str, StoredMessage] | tuple[tuple[str, str], dict[str, Any]]


# ------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------


def header(provider: str | None, scope: str) -> dict[str, Any]:
    """The first line of an export file."""
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": now_ms(),
        "provider": provider,
        "scope": scope,
    }


def message_line(session_id: str, record: StoredMessage) -> dict[str, Any]:
    """One message record as written to the file."""
    return {
        "session_id": session_id,
        "archived": record.archived,
        "message": record.message.to_json(),
    }


def metadata_line(namespace: str, key: str, data: dict[str, Any]) -> dict[str, Any]:
    """One metadata entry as written to the file."""
    return {"namespace": namespace, "key": key, "data": data}


def dumps(line: dict[str, Any]) -> str:
    """One JSON line (UTF-8 text, no NaN: backends refuse it anyway)."""
    return json.dumps(line, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# ------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------


def iter_lines(lines: Iterable[str], source: str) -> Iterator[tuple[int, str, Any, Any]]:
    """Every non-blank line after the header, checked: ``(line, kind, a, b)``.

    ``kind`` is ``"header"`` (a = the header dict), ``"message"`` (a = session id,
    b = ``StoredMessage``) or ``"metadata"`` (a = ``(namespace, key)``, b = data).
    """
    seen_header = False
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue

        def bad(problem: str, number: int = number) -> TransferError:
            return TransferError(f"{source} line {number}: {problem}")

        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise bad(f"not valid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise bad(f"expected a JSON object, got {type(value).__name__}")
        if not seen_header:
            seen_header = True
            yield number, "header", _check_header(value, bad), None
            continue
        keys = set(value)
        if keys == _MESSAGE_KEYS:
            session_id, record = _message_record(value, bad)
            yield number, "message", session_id, record
        elif keys == _METADATA_KEYS:
            namespace, key, data = _metadata_record(value, bad)
            yield number, "metadata", (namespace, key), data
        else:
            raise bad(
                "expected a message line {session_id, archived, message} or a metadata line "
                f"{{namespace, key, data}}, got keys {sorted(keys)}"
            )
    if not seen_header:
        raise TransferError(f"{source}: empty file; expected an Aalis export (JSON lines)")


class _UniqueIds:
    """Refuses a message id a file names twice: a store would refuse the second one
    half-way through an import (ids are unique in a store)."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._seen: set[str] = set()

    def check(self, number: int, record: StoredMessage) -> None:
        ident = record.message.id
        if ident is None:
            return
        if ident in self._seen:
            raise TransferError(
                f"{self._source} line {number}: message id {ident!r} appears twice "
                "(ids are unique in a store)"
            )
        self._seen.add(ident)


def scan_export(lines: Iterable[str], source: str = "<input>") -> ExportSummary:
    """Check every line of an export; keep counts and metadata, not messages (and the ids,
    to refuse one named twice)."""
    summary: ExportSummary | None = None
    ids = _UniqueIds(source)
    for number, kind, a, b in iter_lines(lines, source):
        if kind == "header":
            summary = ExportSummary(a)
        elif kind == "message":
            assert summary is not None
            ids.check(number, b)
            summary.session_counts[a] = summary.session_counts.get(a, 0) + 1
        else:
            assert summary is not None
            if a in summary.metadata:
                raise TransferError(
                    f"{source} line {number}: metadata {a[0]!r}/{a[1]!r} appears twice"
                )
            summary.metadata[a] = b
    assert summary is not None  # iter_lines raised for an empty file
    return summary


def iter_sessions(
    lines: Iterable[str], counts: dict[str, int], source: str = "<input>"
) -> Iterator[tuple[str, list[StoredMessage]]]:
    """Each session's records in file order, yielded as soon as its last line was read.

    ``counts`` comes from ``scan_export`` of the same file. A session whose lines are
    spread over the file is held until its last line; exports write each session in one
    run, so normally one session is in memory at a time.
    """
    pending: dict[str, list[StoredMessage]] = {}
    for _number, kind, session_id, record in iter_lines(lines, source):
        if kind != "message":
            continue
        bucket = pending.setdefault(session_id, [])
        bucket.append(record)
        if len(bucket) == counts.get(session_id, -1):
            yield session_id, pending.pop(session_id)
    if pending:
        raise TransferError(f"{source} changed while it was being imported")


@attrs.define
class ExportFile:
    """A parsed, fully validated export file, held in memory (small files, tests)."""

    header: dict[str, Any]
    #: session id -> its records in file order (sessions in order of first appearance)
    sessions: dict[str, list[StoredMessage]] = attrs.field(factory=dict)
    #: (namespace, key) -> data, in file order
    metadata: dict[tuple[str, str], dict[str, Any]] = attrs.field(factory=dict)

    @property
    def message_count(self) -> int:
        return sum(len(records) for records in self.sessions.values())


def parse_export(lines: Iterable[str], source: str = "<input>") -> ExportFile:
    """Read and check a whole export into memory (``aalis import`` streams instead)."""
    parsed: ExportFile | None = None
    ids = _UniqueIds(source)
    for number, kind, a, b in iter_lines(lines, source):
        if kind == "header":
            parsed = ExportFile(a)
        elif kind == "message":
            assert parsed is not None
            ids.check(number, b)
            parsed.sessions.setdefault(a, []).append(b)
        else:
            assert parsed is not None
            if a in parsed.metadata:
                raise TransferError(
                    f"{source} line {number}: metadata {a[0]!r}/{a[1]!r} appears twice"
                )
            parsed.metadata[a] = b
    assert parsed is not None
    return parsed


def store_order(records: list[StoredMessage]) -> list[StoredMessage]:
    """Records in the order every backend keeps them: by timestamp, then insertion order.

    A file whose lines are not in timestamp order is read back from the store in this
    order; comparing in it is what makes a re-import recognise its own data.
    """
    return sorted(records, key=lambda record: record.message.timestamp or 0)


def _check_header(value: dict[str, Any], bad: Bad) -> dict[str, Any]:
    if value.get("format") != FORMAT:
        raise bad(f'expected the header line {{"format": "{FORMAT}", "version": ...}}')
    version = value.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise bad(f"invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise bad(
            f"format version {version} is newer than this Aalis reads ({FORMAT_VERSION}); "
            "upgrade aalis-api-memory"
        )
    return value


def _message_record(value: dict[str, Any], bad: Bad) -> tuple[str, StoredMessage]:
    session_id = value["session_id"]
    if not isinstance(session_id, str):
        raise bad(f"session_id must be a string, got {type(session_id).__name__}")
    try:
        check_session_id(session_id)
    except (TypeError, ValueError) as exc:
        raise bad(f"invalid session_id: {exc}") from None
    archived = value["archived"]
    if not isinstance(archived, bool):
        raise bad(f"archived must be true or false, got {archived!r}")
    try:
        message = Message.from_json(value["message"])
    except (TypeError, ValueError) as exc:
        raise bad(f"invalid message: {exc}") from None
    if message.timestamp is None:
        raise bad("message has no timestamp (exports always carry one)")
    try:
        # The checks every backend makes before a write: 64-bit timestamp, storable text.
        check_message(message)
    except (TypeError, ValueError) as exc:
        raise bad(f"invalid message: {exc}") from None
    return session_id, StoredMessage(message, archived)


def _metadata_record(value: dict[str, Any], bad: Bad) -> tuple[str, str, dict[str, Any]]:
    namespace, key, data = value["namespace"], value["key"], value["data"]
    try:
        check_namespace(namespace)
        check_key(key)
        encode_metadata(data)
    except (TypeError, ValueError) as exc:
        raise bad(f"invalid metadata entry: {exc}") from None
    return namespace, key, data


@contextmanager
def reopenable(path: Path) -> Iterator[Callable[[], IO[str]]]:
    """A factory of fresh text streams over ``path`` (``-``: stdin, spooled to a temp file).

    Import reads its input more than once; stdin can only be read once, so it is copied to
    a temporary file first (on disk, not in memory).
    """
    if str(path) != "-":
        yield lambda: _open_text(path)
        return
    fd, name = tempfile.mkstemp(prefix="aalis-import-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool)
        yield lambda: _open_text(Path(name))
    finally:
        os.unlink(name)


def _open_text(path: Path) -> IO[str]:
    try:
        return path.open(encoding="utf-8")
    except OSError as exc:
        raise TransferError(f"cannot read {path}: {exc.strerror or exc}") from None


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ExportFile",
    "ExportSummary",
    "TransferError",
    "dumps",
    "header",
    "iter_lines",
    "iter_sessions",
    "message_line",
    "metadata_line",
    "parse_export",
    "reopenable",
    "scan_export",
    "store_order",
]
