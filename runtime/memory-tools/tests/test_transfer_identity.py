"""Message ids through export, import and migrate (docs/host/export-import.md, "Message ids").

Export writes every id, import and migrate keep them; a file written before identity
existed gets ids derived from the file on import, so importing it again is still idempotent,
and it is still recognised by a store whose messages were named otherwise (a schema
migration, or saved live). Real stores throughout: memory-sqlite and memory-inmemory.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aalis_api_memory import StoredMessage
from aalis_api_memory_conformance._support import without_ids
from aalis_memory_tools import (
    TransferError,
    atomic_output,
    export_sessions,
    import_file,
    migrate_between,
)
from aalis_memory_tools._transfer.identity import derived_id
from aalis_schema_message import Message

pytest.importorskip("aalis_plugin_memory_sqlite", reason="memory-sqlite is not installed")
pytest.importorskip("aalis_plugin_memory_inmemory", reason="memory-inmemory is not installed")

from aalis_plugin_memory_inmemory import InMemoryMemory
from aalis_plugin_memory_sqlite import SqliteMemory

T0 = 1_700_000_000_000


def conversation(n: int = 3, text: str = "m") -> list[Message]:
    return [
        Message(role="user" if i % 2 == 0 else "assistant", content=f"{text}{i}", timestamp=T0 + i)
        for i in range(n)
    ]


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteMemory]:
    async with SqliteMemory(tmp_path / "memory.db") as opened:
        yield opened


async def seed(store: Any, session_id: str, messages: list[Message]) -> None:
    for message in messages:
        await store.save_message(session_id, message)


async def export_to(store: Any, path: Path) -> list[dict[str, Any]]:
    with atomic_output(path) as out:
        await export_sessions(store, out)
    return read_lines(path)


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def strip_ids(path: Path, old: Path) -> None:
    """``old``: ``path`` as an Aalis from before message identity would have written it."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines[1:]:
        if "message" in line:
            del line["message"]["id"]
    old.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def ids(store: Any, session_id: str) -> list[str | None]:
    return [m.id for m in await store.get_full_history(session_id, math.inf)]


async def test_export_writes_every_id(store: SqliteMemory, tmp_path: Path) -> None:
    await seed(store, "s", conversation())
    lines = await export_to(store, tmp_path / "dump.jsonl")
    written = [line["message"]["id"] for line in lines[1:] if "message" in line]
    assert written == await ids(store, "s")
    assert all(written)


async def test_export_clear_import_restores_the_same_ids(
    store: SqliteMemory, tmp_path: Path
) -> None:
    await seed(store, "s", conversation(4))
    await store.archive_span("s", 2)
    before = await store.export_session("s")
    await export_to(store, tmp_path / "dump.jsonl")
    await store.clear_all()
    report = await import_file(store, tmp_path / "dump.jsonl")
    assert report.messages_written == 4
    assert await store.export_session("s") == before
    # Again: the ids are stored, so nothing is written.
    again = await import_file(store, tmp_path / "dump.jsonl")
    assert (again.messages_written, again.sessions_skipped) == (0, 1)


async def test_an_old_export_gets_ids_from_the_file_and_a_second_import_writes_nothing(
    store: SqliteMemory, tmp_path: Path
) -> None:
    async with SqliteMemory(tmp_path / "source.db") as source:
        await seed(source, "s", conversation(3))
        await seed(source, "t", conversation(2, text="t"))
        await export_to(source, tmp_path / "new.jsonl")
    strip_ids(tmp_path / "new.jsonl", tmp_path / "old.jsonl")
    first = await import_file(store, tmp_path / "old.jsonl")
    assert first.messages_written == 5
    named = await ids(store, "s")
    assert all(named)
    assert len(set(named)) == 3
    second = await import_file(store, tmp_path / "old.jsonl")
    assert (second.messages_written, second.sessions_written, second.sessions_skipped) == (0, 0, 2)
    assert await ids(store, "s") == named
    # The ids come from the file, not from the run: another store names them the same way.
    other = InMemoryMemory()
    await import_file(other, tmp_path / "old.jsonl")
    assert await ids(other, "s") == named
    records = await other.export_session("s")
    [first] = without_ids([records[0].message])
    assert named[0] == derived_id("s", 0, StoredMessage(first))


async def test_derived_ids_tell_equal_messages_apart(tmp_path: Path) -> None:
    same = Message(role="user", content="same", timestamp=T0)
    first = derived_id("s", 0, StoredMessage(same))
    assert first == derived_id("s", 0, StoredMessage(same))
    assert (
        len(
            {
                first,
                derived_id("s", 1, StoredMessage(same)),
                derived_id("t", 0, StoredMessage(same)),
            }
        )
        == 3
    )
    assert len(first) == 26


async def test_an_old_export_is_recognised_by_a_store_that_named_its_messages_otherwise(
    store: SqliteMemory, tmp_path: Path
) -> None:
    # The store's messages carry ids of their own (saved live, or named by a migration of
    # the file); the old export of the same messages has none.
    await seed(store, "s", conversation(3))
    await export_to(store, tmp_path / "new.jsonl")
    strip_ids(tmp_path / "new.jsonl", tmp_path / "old.jsonl")
    stored = await ids(store, "s")
    report = await import_file(store, tmp_path / "old.jsonl")
    assert (report.messages_written, report.sessions_skipped) == (0, 1)
    assert await ids(store, "s") == stored


async def test_an_old_export_of_a_grown_session_appends_only_the_tail(
    store: SqliteMemory, tmp_path: Path
) -> None:
    await seed(store, "s", conversation(2))
    async with SqliteMemory(tmp_path / "source.db") as source:
        await seed(source, "s", conversation(3))
        await export_to(source, tmp_path / "new.jsonl")
    strip_ids(tmp_path / "new.jsonl", tmp_path / "old.jsonl")
    stored = await ids(store, "s")
    report = await import_file(store, tmp_path / "old.jsonl")
    assert report.messages_written == 1
    after = await ids(store, "s")
    assert after[:2] == stored
    assert after[2] is not None
    assert after[2] not in stored
    again = await import_file(store, tmp_path / "old.jsonl")
    assert again.messages_written == 0


async def test_other_ids_at_the_same_positions_are_a_conflict_even_with_equal_content(
    store: SqliteMemory, tmp_path: Path
) -> None:
    # Same text, other messages: idempotence is decided by id.
    await seed(store, "s", conversation(2))
    async with SqliteMemory(tmp_path / "source.db") as source:
        await seed(source, "s", conversation(2))
        await export_to(source, tmp_path / "dump.jsonl")
        theirs = await ids(source, "s")
    with pytest.raises(TransferError, match="already hold"):
        await import_file(store, tmp_path / "dump.jsonl")
    report = await import_file(store, tmp_path / "dump.jsonl", replace=True)
    assert report.messages_written == 2
    assert await ids(store, "s") == theirs


async def test_an_id_held_by_another_session_refuses_the_import_before_any_write(
    store: SqliteMemory, tmp_path: Path
) -> None:
    await seed(store, "a", [Message(role="user", content="a", timestamp=T0, id="shared")])
    path = tmp_path / "dump.jsonl"
    lines = [
        {"format": "aalis-memory-export", "version": 1},
        {
            "session_id": "first",
            "archived": False,
            "message": {"role": "user", "content": "x", "timestamp": T0, "id": "fresh"},
        },
        {
            "session_id": "second",
            "archived": False,
            "message": {"role": "user", "content": "y", "timestamp": T0, "id": "shared"},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(TransferError, match=r"shared.*held by session 'a'"):
        await import_file(store, path)
    assert await store.get_history("first", math.inf) == []
    assert await store.get_history("second", math.inf) == []


async def test_a_file_naming_one_id_twice_is_refused_at_the_check(
    store: SqliteMemory, tmp_path: Path
) -> None:
    path = tmp_path / "dump.jsonl"
    line = {
        "session_id": "s",
        "archived": False,
        "message": {"role": "user", "content": "x", "timestamp": T0, "id": "twice"},
    }
    other = {**line, "session_id": "t"}
    path.write_text(
        "".join(
            json.dumps(x) + "\n"
            for x in [{"format": "aalis-memory-export", "version": 1}, line, other]
        ),
        encoding="utf-8",
    )
    with pytest.raises(TransferError, match="line 3: message id 'twice' appears twice"):
        await import_file(store, path)
    assert await store.list_sessions() == []


async def test_migrate_keeps_ids_and_a_second_run_writes_nothing(
    store: SqliteMemory,
) -> None:
    await seed(store, "s", conversation(3))
    await store.archive_span("s", 1)
    target = InMemoryMemory()
    await migrate_between(store, "memory-sqlite", target, "memory-inmemory")
    assert await target.export_session("s") == await store.export_session("s")
    again = await migrate_between(store, "memory-sqlite", target, "memory-inmemory")
    assert (again.messages_written, again.sessions_skipped) == (0, 1)


async def test_migrate_refuses_an_id_the_target_holds_in_another_session(
    store: SqliteMemory,
) -> None:
    await seed(store, "s", [Message(role="user", content="x", timestamp=T0, id="taken")])
    target = InMemoryMemory()
    await target.save_message("elsewhere", Message(role="user", content="y", id="taken"))
    with pytest.raises(TransferError, match=r"taken.*held by session 'elsewhere'"):
        await migrate_between(store, "memory-sqlite", target, "memory-inmemory")
    assert await target.get_history("s", math.inf) == []


async def test_reimport_compares_the_old_file_without_ids_against_the_stored_content(
    store: SqliteMemory, tmp_path: Path
) -> None:
    # A changed message of an old file at a position the store holds is still a conflict.
    await seed(store, "s", conversation(2))
    await export_to(store, tmp_path / "new.jsonl")
    strip_ids(tmp_path / "new.jsonl", tmp_path / "old.jsonl")
    text = (tmp_path / "old.jsonl").read_text(encoding="utf-8").replace('"m1"', '"edited"')
    (tmp_path / "old.jsonl").write_text(text, encoding="utf-8")
    with pytest.raises(TransferError, match="already hold"):
        await import_file(store, tmp_path / "old.jsonl")
    assert without_ids(await store.get_history("s", math.inf)) == conversation(2)
