# ruff: noqa: RUF001 - Chinese text uses full-width punctuation
"""The fact layer's rules on a real store: corrections, groups, deletions, rewrites,
forgetting, clears, the prompt block and the queue's gaps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import forget_person, run_clear
from aalis_plugin_user_relation._store import FACTS_NAMESPACE, GAPS_NAMESPACE
from aalis_schema_message import Message

from aalis_core.testing import capture_logs

from .conftest import ADA, BEN, World, host_for, said


async def test_a_correction_supersedes_the_corrected_value(world: World) -> None:
    first = await world.say("s", "My birthday is May 4th.")
    fix = await world.say("s", "Actually it's the 14th, not the 4th.")
    assert await world.values(attribute="birthday") == ["May 14th"]
    every = await world.service.facts(ADA, include_superseded=True)
    (old,) = [f for f in every if f.value == "May 4th"]
    (new,) = [f for f in every if f.value == "May 14th"]
    assert old.superseded_by == new.id
    assert old.sources == (first.id,)
    assert new.sources == (fix.id,)


async def test_a_chinese_correction_supersedes(world: World) -> None:
    await world.say("s", "我的生日是5月4日。")
    await world.say("s", "不是5月4日，是5月14日。")
    assert await world.values(attribute="birthday") == ["5月14日"]


async def test_in_a_group_each_fact_belongs_to_who_said_it(world: World) -> None:
    await world.say("group", "I live in Oslo and I work at Acme.", ADA)
    await world.say("group", "I live in Rome.", BEN)
    reply = Message(role="assistant", content="I live in Paris.", timestamp=world.clock + 5)
    await world.memory.save_message("group", reply)
    await world.host.emit("memory_messages_saved", session_id="group", messages=[reply])
    unknown = Message(role="user", content="I live in Lima.", timestamp=world.clock + 6)
    await world.host.emit("memory_messages_saved", session_id="group", messages=[unknown])
    assert await world.plugin.active()[0].settle(5.0)
    assert sorted(await world.values(ADA)) == ["Acme", "Oslo"]
    assert await world.values(BEN) == ["Rome"]
    every = await world.plugin.store.all()  # type: ignore[union-attr]
    assert {f.person for f in every} == {ADA, BEN}  # no one's Paris, no one's Lima


async def test_a_fact_goes_only_when_its_every_source_goes(world: World) -> None:
    one = await world.say("s", "I'm allergic to peanuts.")
    two = await world.say("s2", "I'm allergic to peanuts.")
    await world.delete("s", one)
    assert await world.values(attribute="allergy") == ["peanuts"]
    await world.delete("s2", two)
    assert await world.values(attribute="allergy") == []


async def test_a_rewritten_message_is_read_again(world: World) -> None:
    message = await world.say("s", "I live in Lyon.")
    assert await world.memory.update_message_content("s", "Lyon", "Nice") == 1
    (record,) = await world.memory.get_messages_by_ids([message.id])
    await world.host.emit("memory_messages_rewritten", session_id="s", messages=[record.message])
    every = await world.service.facts(ADA, include_superseded=True)
    assert [(f.value, f.current, f.sources) for f in every] == [("Nice", True, (message.id,))]


async def test_forget_person_erases_their_facts_with_a_counted_row(world: World) -> None:
    await world.say("s", "I live in Paris.", ADA)
    await world.say("s", "I moved to Berlin.", ADA)
    await world.say("t", "I live in Rome.", BEN)
    rows = await forget_person(world.host, "cli:ada")
    (row,) = [r for r in rows if r.source == "user-relation"]
    assert row.success
    assert row.counts == {"facts": 2}
    assert await world.service.facts(ADA, include_superseded=True) == []
    assert await world.values(BEN) == ["Rome"]


async def test_a_session_clear_naming_relation_says_it_is_cross_session(world: World) -> None:
    await world.say("s", "I live in Paris.")
    rows = await run_clear(world.host, "session", "s", ["relation"])
    (row,) = [r for r in rows if r.source == "user-relation"]
    assert not row.success
    assert row.type == "relation"
    assert "cross-session" in str(row.message)
    assert await world.values() == ["Paris"]
    rows = await run_clear(world.host, "session", "s")
    assert [r for r in rows if r.source == "user-relation"] == []


async def test_clear_all_removes_the_facts_and_they_do_not_come_back(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    host, plugin = host_for(db)
    async with host:
        world = World(host, plugin)
        await world.say("s", "I live in Paris.")
        rows = await run_clear(host, "all", types=["relation"])
        (row,) = [r for r in rows if r.source == "user-relation"]
        assert row.success
        assert "1 facts deleted" in str(row.message)
        assert await world.values() == []
        assert await world.memory.list_metadata(FACTS_NAMESPACE) == []
    host, plugin = host_for(db)
    async with host:  # the history is still there, but it was read: no resurrection
        await plugin.active()[0].backfill()
        assert await World(host, plugin).values() == []


async def test_the_prompt_block_shows_current_facts_only(world: World) -> None:
    await world.say("s", "My name is Ada.")
    await world.say("s", "I live in Paris.")
    await world.say("s", "I moved to Berlin last month.")
    block = await world.block("s", "where do I live?")
    assert block.startswith("What I know about Ada (cli:ada)")
    assert "- city: Berlin" in block
    assert "Paris" not in block
    assert await world.block("other") == ""  # scope session: another session sees nothing


@pytest.mark.parametrize("world", [{"prompt_tokens": 25}], indirect=True)
async def test_the_prompt_block_keeps_to_its_budget(world: World) -> None:
    await world.say("s", "I like jazz. I like hiking. I like chess. I like tea. I like Go.")
    await world.say("s", "I live in Paris.")
    block = await world.block("s", "where do I live?")
    assert "- city: Paris" in block  # the relevant fact is the one kept
    assert len(block.splitlines()) < 6


@pytest.mark.parametrize("world", [{"recall_scope": "all"}], indirect=True)
async def test_scope_all_reaches_a_persons_other_sessions_but_not_from_a_group(
    world: World,
) -> None:
    await world.say("private", "I live in Paris.", ADA)
    await world.say("other", "I like tea.", ADA)
    assert "city: Paris" in await world.block("other")
    await world.say("group", "I work at Acme.", ADA)
    await world.say("group", "I work at Initech.", BEN)
    group = await world.block("group")
    assert "Paris" not in group
    assert "employer: Acme" in group
    assert "employer: Initech" in group


async def test_an_invalid_scope_is_session_with_a_warning(tmp_path: Path) -> None:
    host, plugin = host_for(tmp_path / "w.db", {"recall_scope": "everything"})
    with capture_logs() as logs:
        async with host:
            world = World(host, plugin)
            await world.say("a", "I live in Paris.")
            assert await world.block("b") == ""
            assert "city: Paris" in await world.block("a")
    assert any(line["event"] == "invalid recall_scope; using session" for line in logs.lines)


@pytest.mark.parametrize("world", [{"queue_size": 1, "backfill_retry_s": 3600}], indirect=True)
async def test_a_full_queue_records_a_gap_that_is_backfilled(world: World) -> None:
    deriver = world.plugin.active()[0]
    messages = [said(f"I like sport number {i}.", world.clock + i) for i in range(1, 6)]
    for message in messages:
        await world.memory.save_message("s", message)
    await world.host.emit("memory_messages_saved", session_id="s", messages=messages)
    assert deriver.dropped == 4
    assert [e.key for e in await world.memory.list_metadata(GAPS_NAMESPACE)] == ["s"]
    # The worker backfills the gap from the store as soon as its queue is empty.
    for _ in range(100):
        if not deriver.gaps and await deriver.settle(1.0):
            break
        await asyncio.sleep(0.05)
    assert len(await world.values(attribute="likes")) == 5
    assert await world.memory.list_metadata(GAPS_NAMESPACE) == []


@pytest.mark.parametrize("world", [{"settle_s": 5.0}], indirect=True)
async def test_a_turn_never_waits_for_another_sessions_reading(world: World) -> None:
    await world.say("s", "I live in Paris.")
    deriver = world.plugin.active()[0]
    gate = asyncio.Event()
    derive = deriver.derive

    async def slow(by_session: Any, **kwargs: Any) -> int:
        if "busy" in by_session:
            await gate.wait()
        return await derive(by_session, **kwargs)

    deriver.derive = slow  # type: ignore[method-assign]
    message = said("I like jazz.", world.clock + 10)
    await world.memory.save_message("busy", message)
    await world.host.emit("memory_messages_saved", session_id="busy", messages=[message])
    started = asyncio.get_running_loop().time()
    block = await world.block("s", "where do I live?")
    assert asyncio.get_running_loop().time() - started < 1.0
    assert "city: Paris" in block
    gate.set()
    assert await deriver.settle(5.0)


@pytest.mark.parametrize("world", [{"recall_scope": "all"}], indirect=True)
async def test_a_group_whose_other_member_stated_no_fact_is_still_a_group(world: World) -> None:
    await world.say("private", "I live in Paris.", ADA)
    await world.say("group", "Hello everyone!", BEN)  # Ben says nothing about himself
    await world.say("group", "I work at Acme.", ADA)
    block = await world.block("group")  # a prompt whose history is cut: no speaker in it
    assert "employer: Acme" in block
    assert "Paris" not in block
