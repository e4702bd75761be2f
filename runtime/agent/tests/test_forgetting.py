"""forget_person and the memory_forget chain in a real host (docs/host/privacy.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aalis_agent import forget_person
from aalis_api_memory import ForgetRequest, ForgetResult, Person, Put, forget_marked_entries, memory
from aalis_schema_message import Message

from aalis_core import Plugin, hookimpl

T0 = 1_700_000_000_000


def said(text: str, ts: int, platform: str | None = None, user_id: str | None = None) -> Message:
    metadata = {
        key: value
        for key, value in (("platform", platform), ("user_id", user_id))
        if value is not None
    }
    return Message(role="user", content=text, timestamp=ts, metadata=metadata or None)


def reply(text: str, ts: int) -> Message:
    return Message(role="assistant", content=text, timestamp=ts)


class Events(Plugin):
    name = "events"

    def __init__(self) -> None:
        self.deleted: list[tuple[str, list[int], list[str]]] = []
        self.changed: list[str] = []

    @hookimpl
    def memory_messages_deleted(self, session_id: str, timestamps: Any, ids: Any) -> None:
        self.deleted.append((session_id, list(timestamps), list(ids)))

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.changed.append(session_id)


class Layer(Plugin):
    """A plugin keeping something per session: reports what the store action told it."""

    name = "layer"

    def __init__(self, raise_: bool = False) -> None:
        self.raise_ = raise_
        self.seen: list[ForgetRequest] = []

    @hookimpl
    async def memory_forget(
        self, request: ForgetRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        await call_next()
        self.seen.append(request)
        if self.raise_:
            raise RuntimeError("layer broke")
        request.report(self.name, True, "done", {"sessions": len(request.affected_sessions)})


async def seed(mem: Any) -> None:
    await mem.save_message("alice-dm", said("my bank PIN is 2580", T0, "telegram", "alice"))
    await mem.save_message("alice-dm", reply("Noted: your PIN is 2580.", T0 + 1))
    await mem.save_message("alice-dm", said("and my locker is 17", T0 + 2, "telegram", "alice"))
    await mem.archive_span("alice-dm", 2)  # archived messages go too
    await mem.save_message("group", said("morning all", T0 + 3, "telegram", "bob"))
    await mem.save_message(
        "group", said("alice here, I live on Elm St", T0 + 4, "telegram", "alice")
    )
    await mem.archive_span("group", 2)
    await mem.save_message("group", reply("hi both", T0 + 5))
    await mem.save_message("group", said("see you at noon", T0 + 6, "telegram", "alice"))
    await mem.save_message("group", said("bob says bye", T0 + 7, "telegram", "bob"))
    # the same user id on another platform is another person
    await mem.save_message("qq-alice", said("qq alice stays", T0 + 8, "qq", "alice"))
    await mem.save_message("nobody", said("no person here", T0 + 9))


def everything(records: list[Any]) -> str:
    return "\n".join(str(r.message.content) for r in records)


async def test_forget_erases_private_sessions_whole_and_the_person_in_groups(
    make_host: Any,
) -> None:
    events, layer = Events(), Layer()
    async with make_host(events, layer) as host:
        mem = host.capability(memory).use
        await seed(mem)
        rows = await forget_person(host, "telegram:alice")
        store_row = next(row for row in rows if row.source == "memory")
        assert store_row.success, store_row
        assert store_row.counts == {"private_sessions": 1, "group_sessions": 1, "messages": 5}
        assert [row.source for row in rows] == ["memory", "layer"]
        assert rows[1].counts == {"sessions": 2}
        sessions = {info.session_id for info in await mem.list_sessions()}
        assert sessions == {"group", "qq-alice", "nobody"}
        group = everything(await mem.export_session("group"))
        assert "Elm St" not in group
        assert "noon" not in group
        assert "morning all" in group
        assert "bob says bye" in group
        assert "hi both" in group  # a reply in a group stays (docs/host/privacy.md)
        assert everything(await mem.export_session("qq-alice")) == "qq alice stays"
        [request] = layer.seen
        assert request.private_sessions == ["alice-dm"]
        assert [m.content for m in request.group_messages["group"]] == [
            "alice here, I live on Elm St",
            "see you at noon",
        ]
        [(sid, timestamps, ids)] = events.deleted
        assert (sid, timestamps) == ("group", [T0 + 4, T0 + 6])
        assert len(ids) == 2
        assert all(ids)
        assert sorted(events.changed) == ["alice-dm", "group"]
        # forgetting again finds nothing and says so
        again = await forget_person(host, Person("telegram", "alice"))
        assert again[0].success
        assert again[0].counts["messages"] == 0


async def test_a_failing_layer_is_contained_and_named(make_host: Any) -> None:
    async with make_host(Layer(raise_=True)) as host:
        await seed(host.capability(memory).use)
        rows: list[ForgetResult] = await forget_person(host, "telegram:alice")
        assert rows[0].source == "memory"
        assert rows[0].success
        failed = [row for row in rows if not row.success]
        assert [row.source for row in failed] == ["layer"]
        assert "layer broke" in str(failed[0].message)


@pytest.mark.parametrize("bad", ["alice", ":alice", "telegram:", "", "  :  "])
async def test_a_malformed_person_is_refused_before_anything_changes(
    make_host: Any, bad: str
) -> None:
    async with make_host() as host:
        mem = host.capability(memory).use
        await seed(mem)
        with pytest.raises(ValueError, match="PLATFORM:USER_ID"):
            await forget_person(host, bad)
        assert len(await mem.list_sessions()) == 4


async def test_a_user_id_may_contain_a_colon() -> None:
    assert Person.parse("matrix:@alice:example.org") == Person("matrix", "@alice:example.org")


async def test_marked_metadata_entries_go_in_one_batch(make_host: Any) -> None:
    async with make_host() as host:
        mem = host.capability(memory).use
        await mem.commit_metadata(
            [
                Put("prefs", "a", {"person": "telegram:alice", "tz": "CET"}),
                Put("prefs", "b", {"person": "telegram:bob", "tz": "UTC"}),
                Put("prefs", "c", {"tz": "UTC"}),
            ]
        )
        assert await forget_marked_entries(mem, ["prefs"], Person("telegram", "alice")) == 1
        assert [e.key for e in await mem.list_metadata("prefs")] == ["b", "c"]


class Gate(Plugin):
    """Holds the forget chain open on the way in until the test says go."""

    name = "gate"

    def __init__(self) -> None:
        import asyncio

        self.entered = asyncio.Event()
        self.go = asyncio.Event()

    @hookimpl
    async def memory_forget(
        self, request: ForgetRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        self.entered.set()
        await self.go.wait()
        await call_next()


async def test_a_message_saved_during_a_forget_waits_and_lands_afterwards(
    make_host: Any,
) -> None:
    import asyncio

    gate = Gate()
    async with make_host(gate) as host:
        mem = host.capability(memory).use
        await seed(mem)
        forgetting = asyncio.create_task(forget_person(host, "telegram:alice"))
        await gate.entered.wait()
        late = asyncio.create_task(
            mem.save_message(
                "alice-dm", said("said after the forget began", T0 + 50, "telegram", "alice")
            )
        )
        await asyncio.sleep(0.05)
        assert not late.done()  # held: it must not slip in before the erasure
        gate.go.set()
        await forgetting
        await late
        assert [m.content for m in await mem.get_history("alice-dm")] == [
            "said after the forget began"
        ]
