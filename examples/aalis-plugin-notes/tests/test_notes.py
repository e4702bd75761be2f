"""The notes plugin tested the way a third-party author would: in a real host.

``aalis_core.testing.running_host`` starts a host with exactly the plugins given (nothing
discovered from the environment) and the contracts' hookspecs; the reference in-memory
backend stands in for a database, so these tests need no file and no server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aalis_agent import run_clear
from aalis_api_memory import UnknownClearType, memory
from aalis_plugin_memory_inmemory import MemoryInmemory
from aalis_plugin_notes import NAMESPACE, NotesPlugin
from aalis_schema_message import Message

from aalis_core.testing import running_host


async def test_notes_are_stored_in_the_metadata_namespace(tmp_path: Path) -> None:
    plugin = NotesPlugin()
    async with running_host([MemoryInmemory(), plugin], data_dir=tmp_path) as host:
        await plugin.notes().add("s1", "call back on Monday")
        await plugin.notes().add("s1", "prefers email")
        assert [n.text for n in await plugin.notes().list("s1")] == [
            "call back on Monday",
            "prefers email",
        ]
        stored = await host.capability(memory).use.get_metadata(NAMESPACE, "s1")
        assert stored is not None
        assert [n["text"] for n in stored["notes"]] == ["call back on Monday", "prefers email"]
        assert await plugin.notes().list("other") == []


async def test_limits_come_from_config_and_refuse_without_writing(tmp_path: Path) -> None:
    plugin = NotesPlugin()
    config = {"plugins": {"notes": {"max_notes": 1, "max_length": 5}}}
    async with running_host([MemoryInmemory(), plugin], config, data_dir=tmp_path):
        with pytest.raises(ValueError, match="at most 5 characters"):
            await plugin.notes().add("s1", "too long")
        await plugin.notes().add("s1", "ok")
        with pytest.raises(ValueError, match="already has 1 notes"):
            await plugin.notes().add("s1", "more")
        assert [n.text for n in await plugin.notes().list("s1")] == ["ok"]


def test_a_bad_config_value_names_the_key(tmp_path: Path) -> None:
    from aalis_core.testing import make_test_host, plugin_config_error

    host = make_test_host([NotesPlugin()], {"plugins": {"notes": {"max_notes": 0}}})
    assert "[plugins.notes] key 'max_notes'" in str(plugin_config_error(host, "notes"))


async def test_session_clear_of_type_notes_keeps_history_and_other_sessions(
    tmp_path: Path,
) -> None:
    plugin = NotesPlugin()
    async with running_host([MemoryInmemory(), plugin], data_dir=tmp_path) as host:
        mem = host.capability(memory).use
        await mem.save_message("s1", Message(role="user", content="hello"))
        await plugin.notes().add("s1", "a")
        await plugin.notes().add("s1", "b")
        await plugin.notes().add("s2", "c")

        rows = await run_clear(host, "session", "s1", types=["notes"])
        assert [(r.source, r.type, r.success, str(r.message)) for r in rows] == [
            ("notes", "notes", True, "2 notes deleted"),
        ]
        assert await plugin.notes().list("s1") == []
        assert [n.text for n in await plugin.notes().list("s2")] == ["c"]
        assert len(await mem.get_history("s1")) == 1  # only notes were asked for
        assert plugin.history_changes["s1"] == 0  # the history did not change


async def test_clear_all_removes_every_note_and_counts_history_changes(tmp_path: Path) -> None:
    plugin = NotesPlugin()
    async with running_host([MemoryInmemory(), plugin], data_dir=tmp_path) as host:
        mem = host.capability(memory).use
        await mem.save_message("s1", Message(role="user", content="hello"))
        await plugin.notes().add("s1", "a")
        await plugin.notes().add("s2", "b")

        rows = await run_clear(host, "all")
        by_type = {r.type: r for r in rows}
        assert by_type["notes"].success
        assert str(by_type["notes"].message) == "notes of 2 sessions deleted"
        assert by_type["context"].success
        assert await mem.list_metadata(NAMESPACE) == []
        assert plugin.history_changes["s1"] == 1


async def test_notes_is_a_registered_clear_type(tmp_path: Path) -> None:
    async with running_host([MemoryInmemory(), NotesPlugin()], data_dir=tmp_path) as host:
        with pytest.raises(UnknownClearType, match=r"known: .*notes"):
            await run_clear(host, "session", "s1", types=["nots"])


async def test_without_memory_the_clear_row_says_so(tmp_path: Path) -> None:
    async with running_host([NotesPlugin()], data_dir=tmp_path) as host:
        rows = await run_clear(host, "session", "s1", types=["notes"])
        notes_rows = [r for r in rows if r.type == "notes"]
        assert [(r.source, r.success) for r in notes_rows] == [("notes", False)]
        assert "no memory backend" in str(notes_rows[0].message)


async def test_forget_takes_the_persons_private_notes_and_the_notes_about_them(
    tmp_path: Path,
) -> None:
    from aalis_agent import forget_person

    plugin = NotesPlugin()
    async with running_host([MemoryInmemory(), plugin], data_dir=tmp_path) as host:
        mem = host.capability(memory).use
        alice = {"platform": "telegram", "user_id": "alice"}
        bob = {"platform": "telegram", "user_id": "bob"}
        await mem.save_message("alice-dm", Message(role="user", content="hi", metadata=alice))
        await mem.save_message("group", Message(role="user", content="yo", metadata=bob))
        await mem.save_message("group", Message(role="user", content="hey", metadata=alice))
        await plugin.notes().add("alice-dm", "alice is vegetarian")
        await plugin.notes().add("group", "alice lives on Elm St", person="telegram:alice")
        await plugin.notes().add("group", "bob runs the meetings")
        rows = await forget_person(host, "telegram:alice")
        [row] = [r for r in rows if r.source == "notes"]
        assert row.success
        assert row.counts == {"notes": 2}
        assert await plugin.notes().list("alice-dm") == []
        assert [n.text for n in await plugin.notes().list("group")] == ["bob runs the meetings"]
