"""The transfer engine from Python (``aalis_memory_tools._transfer``), without the CLI.

- export streams: each session's lines are in the output before the next session is read,
  each namespace's entries before the next namespace is read, and the peak memory of an
  export is a fraction of the file it writes;
- ``export_sessions`` / ``import_file`` round-trip a real store and a re-import writes
  nothing; ``export_lines`` (the in-memory variant kept for old callers) gives the same lines;
- the engine and the format import no click: the commands are the only CLI part.
"""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import MetadataEntry, Put, SessionInfo, StoredMessage
from aalis_memory_tools import (
    TransferError,
    atomic_output,
    export_lines,
    export_sessions,
    import_file,
)
from aalis_schema_message import Message

PACKAGE = Path(__file__).resolve().parents[1] / "aalis_memory_tools"


class Output(io.StringIO):
    """A text output that also says how many lines were written so far."""

    @property
    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.getvalue().splitlines()]


class RecordingStore:
    """The four extensions an export reads, over generated data, noting what the output
    held at every read: ``(call, argument, message lines, metadata lines)``."""

    def __init__(
        self, sessions: int, per_session: int, out: Output | None = None, text: str = "x"
    ) -> None:
        self.sessions = [f"s{i:04d}" for i in range(sessions)]
        self.per_session = per_session
        self.text = text
        self.out = out
        self.calls: list[tuple[str, str, int, int]] = []

    def _note(self, call: str, argument: str) -> None:
        if self.out is not None:
            lines = self.out.lines[1:] if self.out.getvalue() else []
            messages = sum(1 for line in lines if "session_id" in line)
            self.calls.append((call, argument, messages, len(lines) - messages))

    async def list_sessions(self) -> list[SessionInfo]:
        return [
            SessionInfo(session_id=sid, active=self.per_session, archived=0, last_timestamp=None)
            for sid in self.sessions
        ]

    async def export_session(self, session_id: str) -> list[StoredMessage]:
        self._note("export_session", session_id)
        if session_id not in self.sessions:
            return []
        return [
            StoredMessage(Message(role="user", content=f"{self.text} {i}", timestamp=i + 1))
            for i in range(self.per_session)
        ]

    async def list_namespaces(self) -> list[str]:
        return ["alpha", "beta", "gamma"]

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]:
        self._note("list_metadata", namespace)
        return [MetadataEntry(key=f"k{i}", data={"i": i}, updated_at=1) for i in range(2)]


async def test_export_writes_each_session_before_reading_the_next() -> None:
    out = Output()
    store = RecordingStore(sessions=40, per_session=3, out=out)
    report = await export_sessions(store, out, provider="recording")

    assert (report.sessions, report.messages, report.metadata) == (40, 120, 6)
    reads = [(arg, messages) for call, arg, messages, _ in store.calls if call == "export_session"]
    # When session k is read, the 3 lines of each of the k sessions before it are written.
    assert reads == [(sid, 3 * k) for k, sid in enumerate(store.sessions)]
    namespaces = [(arg, meta) for call, arg, _, meta in store.calls if call == "list_metadata"]
    assert namespaces == [("alpha", 0), ("beta", 2), ("gamma", 4)]
    assert len(out.lines) == 1 + 120 + 6


async def test_export_peak_memory_is_a_fraction_of_the_file(tmp_path: Path) -> None:
    store = RecordingStore(sessions=400, per_session=10, text="y" * 1_000)
    path = tmp_path / "big.jsonl"
    tracemalloc.start()
    try:
        with atomic_output(path) as out:
            report = await export_sessions(store, out, provider="recording")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert report.messages == 4_000
    assert size > 4_000_000
    # One session (about 10 kB of text) at a time, not the 4 MB file.
    assert peak < size / 10, (peak, size)


async def test_nothing_is_written_for_an_unknown_session() -> None:
    out = Output()
    with pytest.raises(TransferError, match="session 'nope' has no messages in 'recording'"):
        await export_sessions(RecordingStore(2, 1), out, provider="recording", session_id="nope")
    assert out.getvalue() == ""


async def test_a_missing_extension_is_named_before_anything_is_written() -> None:
    class Bare:
        async def list_metadata(self, namespace: str) -> list[Any]:
            return []

    out = Output()
    with pytest.raises(TransferError, match=r"'bare' does not implement list_sessions\(\)"):
        await export_sessions(Bare(), out, provider="bare")
    assert out.getvalue() == ""


async def test_export_lines_gives_the_lines_export_sessions_writes() -> None:
    out = Output()
    await export_sessions(RecordingStore(3, 2), out, provider="p", session_id="s0001")
    lines, report = await export_lines(RecordingStore(3, 2), "p", "s0001")
    collected, written = [json.loads(line) for line in lines], out.lines
    for export in (collected, written):
        export[0].pop("exported_at")
    assert collected == written
    assert (report.sessions, report.messages) == (1, 2)


@pytest.fixture
async def two_stores(tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    sqlite = pytest.importorskip("aalis_plugin_memory_sqlite")
    async with (
        sqlite.SqliteMemory(tmp_path / "a.db") as a,
        sqlite.SqliteMemory(tmp_path / "b.db") as b,
    ):
        yield a, b


async def test_export_then_import_file_round_trips_and_reruns_write_nothing(
    two_stores: tuple[Any, Any], tmp_path: Path
) -> None:
    source, target = two_stores
    for i in range(5):
        await source.save_message("one", Message(role="user", content=f"m{i}", timestamp=i + 1))
    await source.archive_span("one", 2)
    await source.save_message("two", Message(role="assistant", content="hi", timestamp=9))
    await source.commit_metadata([Put("notes", "one", {"n": 1})])

    path = tmp_path / "dump.jsonl"
    with atomic_output(path) as out:
        exported = await export_sessions(source, out, provider="a")
    assert (exported.sessions, exported.messages, exported.metadata) == (2, 6, 1)

    first = await import_file(target, path, provider="b")
    assert (first.sessions_written, first.messages_written, first.metadata_written) == (2, 6, 1)
    for sid in ("one", "two"):
        assert await target.export_session(sid) == await source.export_session(sid)
    again = await import_file(target, str(path), provider="b")
    assert (again.sessions_written, again.sessions_skipped, again.metadata_skipped) == (0, 2, 1)


def test_the_engine_and_the_format_import_no_click() -> None:
    modules = [PACKAGE / "_export_format.py", *sorted((PACKAGE / "_transfer").glob("*.py"))]
    for module in modules:
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        assert "click" not in imported, module
    # ...nor through what they import: a script using the engine never loads the CLI.
    probe = "import sys, aalis_memory_tools._transfer; print('click' in sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "False"
