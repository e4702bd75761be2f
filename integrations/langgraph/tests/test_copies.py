"""The history copy made behind the puts (``_copies.py``), on a real memory-sqlite store.

A put commits its checkpoint with a due marker and returns; the copy of the thread's
newest messages into its session's history is made ``history_delay`` seconds later, once
for all the puts in between. What must hold: the copy is owed durably (a killed process's
copies are made by the next saver), the host's stop, a clear and a forget make the owed
copies first (a late copy never brings cleared or forgotten words back), a person's turn
is never stamped with another's, and a copy that fails is raised by ``aflush``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aalis_langgraph._saver as saver_module
import pytest
from aalis_agent import forget_person, run_clear
from aalis_api_memory import Person, memory
from aalis_langgraph import AalisSaver, LangGraphThreads, thread_namespace
from aalis_langgraph._copies import DUE
from aalis_plugin_memory_sqlite import MemorySqlite
from aalis_schema_message import Message
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from aalis_core import Host, Plugin, hookimpl


class _Saves(Plugin):
    """Counts the saves the copies announce (one per copy that saved anything)."""

    name = "test-saves"

    def __init__(self) -> None:
        self.batches: list[int] = []

    @hookimpl
    def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None:
        self.batches.append(len(messages))


#: Providers this test does not start (servers, network, a model download).
OTHER_PROVIDERS = [
    "memory-mongodb",
    "memory-postgres",
    "vectorstore-pgvector",
    "llm-openai",
    "embedding-openai",
    "embedding-local",
]


def _config(tmp_path: Path) -> dict[str, Any]:
    return {"host": {"data_dir": str(tmp_path / "data"), "log_level": "warning"}}


class _Thread:
    """Puts checkpoints of one thread straight through ``aput``, as LangGraph does."""

    def __init__(self, saver: AalisSaver, thread: str, **person: str) -> None:
        self.saver, self.thread, self.person = saver, thread, person
        self.parent: str | None = None
        self.step = 0

    async def put(self, messages: list[BaseMessage]) -> None:
        cp = empty_checkpoint()
        self.step += 1
        cp["channel_values"] = {"messages": messages}
        cp["channel_versions"] = {"messages": f"{self.step:032}.0"}
        configurable: dict[str, Any] = {
            "thread_id": self.thread,
            "checkpoint_ns": "",
            **self.person,
        }
        if self.parent:
            configurable["checkpoint_id"] = self.parent
        await self.saver.aput(
            {"configurable": configurable}, cp, {"step": self.step}, dict(cp["channel_versions"])
        )
        self.parent = cp["id"]


def _turns(n: int) -> list[BaseMessage]:
    return [
        HumanMessage(f"question {i}", id=f"q{i}")
        if i % 2 == 0
        else AIMessage(f"answer {i}", id=f"a{i}")
        for i in range(n)
    ]


async def _owed(store: Any) -> list[str]:
    return [e.key for e in await store.list_metadata(DUE)]


async def test_many_puts_owe_one_copy_made_after_the_delay(tmp_path: Path) -> None:
    saves = _Saves()
    async with Host(_config(tmp_path), [MemorySqlite(), saves], discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host, history_delay=1.0)  # far longer than 30 puts take
        thread = _Thread(saver, "t")
        for n in range(1, 31):
            await thread.put(_turns(n))
        # Nothing copied yet, and the copy is owed durably: the first put of the window
        # wrote its marker, the others joined it.
        assert await store.get_history("t") == []
        assert len(await _owed(store)) == 1
        # The delay runs out: the copy is made without a flush.
        deadline = asyncio.get_running_loop().time() + 15
        while await _owed(store):  # the copy's last write deletes the marker
            assert asyncio.get_running_loop().time() < deadline, "no copy after the delay"
            await asyncio.sleep(0.05)
        assert [m.content for m in await store.get_history("t")] == [m.content for m in _turns(30)]
        assert [m.id for m in await store.get_history("t")] == [m.id for m in _turns(30)]
        assert await _owed(store) == []
        assert saves.batches == [30]  # thirty puts, one copy of thirty messages


async def test_aflush_makes_the_owed_copy_now_and_the_copy_follows_removals(
    tmp_path: Path,
) -> None:
    async with Host(_config(tmp_path), [MemorySqlite()], discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host, history_delay=60)
        thread = _Thread(saver, "t")
        await thread.put(_turns(4))
        await saver.aflush()
        assert [m.content for m in await store.get_history("t")] == [
            "question 0", "answer 1", "question 2", "answer 3"
        ]  # fmt: skip
        # The graph removed one and added one: the copy is the newest checkpoint's.
        turns = _turns(6)
        await thread.put([turns[0], *turns[2:]])
        await saver.aflush()
        assert [m.content for m in await store.get_history("t")] == [
            "question 0", "question 2", "answer 3", "question 4", "answer 5"
        ]  # fmt: skip
        assert await _owed(store) == []


_KILLED = """
import asyncio, os, sys
from aalis_langgraph import AalisSaver
from aalis_plugin_memory_sqlite import MemorySqlite
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from aalis_core import Host

async def main() -> None:
    host = Host({"host": {"data_dir": sys.argv[1], "log_level": "error"}}, [MemorySqlite()],
                discover=False)
    await host.start()
    saver = AalisSaver(host, history_delay=60, user_id="ada")
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage("kept?", id="k1"), AIMessage("yes", id="k2")]}
    cp["channel_versions"] = {"messages": "1.0"}
    await saver.aput({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, cp, {}, {"messages": "1.0"})
    os._exit(0)  # killed: no stop, no flush

asyncio.run(main())
"""


async def test_a_killed_process_leaves_its_copies_owed_to_the_next_saver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", textwrap.dedent(_KILLED), str(data)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert done.returncode == 0, done.stderr
    async with Host(_config(tmp_path), [MemorySqlite()], discover=False) as host:
        store = host.capability(memory).use
        assert await store.get_history("t") == []
        assert len(await _owed(store)) == 1
        # A marker younger than RECOVER_AFTER_MS is left to the (maybe live) process...
        await AalisSaver(host).aflush()
        assert await store.get_history("t") == []
        # ...and an older one is a stopped process's: the next saver makes its copy.
        monkeypatch.setattr(saver_module, "RECOVER_AFTER_MS", 0)
        saver = AalisSaver(host)
        await saver.aflush()  # also what the saver's first put does
        stored = await store.get_history("t")
        assert [m.content for m in stored] == ["kept?", "yes"]
        # The speaker rode in the marker: the recovered copy stamps them.
        assert (stored[0].metadata or {}).get("user_id") == "ada"
        assert await _owed(store) == []


async def test_the_hosts_stop_makes_the_owed_copies(tmp_path: Path) -> None:
    saves = _Saves()
    # The listener starts before the langgraph plugin, so it stops after it, as
    # memory-vector, memory-summary and user-relation do (the next test).
    plugins = [MemorySqlite(), saves, LangGraphThreads()]
    async with Host(_config(tmp_path), plugins, discover=False) as host:
        saver = AalisSaver(host, history_delay=60)
        await _Thread(saver, "t").put(_turns(2))
    assert saves.batches == [2]  # made while the listeners still listened
    async with Host(_config(tmp_path), [MemorySqlite()], discover=False) as host:
        store = host.capability(memory).use
        assert [m.content for m in await store.get_history("t")] == ["question 0", "answer 1"]
        assert await _owed(store) == []


async def test_the_plugin_stops_before_the_plugins_that_listen_to_the_copies(
    tmp_path: Path,
) -> None:
    config = {
        "host": {"data_dir": str(tmp_path / "data"), "log_level": "warning"},
        "plugins": {"disabled": OTHER_PROVIDERS},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }
    async with Host(config) as host:
        started = [name for name, _ in host.hooks.hook_impls("memory_clear")]
        # Stop runs in reverse start order: langgraph's flush reaches the listeners.
        for listener in ("memory-vector", "memory-summary", "user-relation"):
            assert started.index(listener) < started.index("langgraph"), started


async def test_a_clear_never_lets_an_owed_copy_bring_the_thread_back(tmp_path: Path) -> None:
    """The clear flushes first; a copy owed after it (another process's) reads the
    store's newest checkpoint, which the clear deleted with the record: nothing returns."""
    plugins = [MemorySqlite(), LangGraphThreads()]
    async with Host(_config(tmp_path), plugins, discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host, history_delay=0.05)
        await _Thread(saver, "t").put(_turns(4))
        rows = await run_clear(host, "session", session_id="t")
        assert all(r.success for r in rows), rows
        await asyncio.sleep(0.2)  # past the delay: a copy still owed would land now
        await saver.aflush()
        assert await store.get_history("t") == []
        assert await store.list_metadata(thread_namespace("t")) == []
        assert await _owed(store) == []


async def test_a_forget_never_lets_an_owed_copy_bring_the_persons_words_back(
    tmp_path: Path,
) -> None:
    plugins = [MemorySqlite(), LangGraphThreads()]
    async with Host(_config(tmp_path), plugins, discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host, history_delay=60, platform="telegram", user_id="ada")
        await _Thread(saver, "t").put(
            [HumanMessage("My passport is X1234567.", id="p1"), AIMessage("Noted.", id="p2")]
        )
        await forget_person(host, Person("telegram", "ada"))
        await saver.aflush()
        assert "X1234567" not in " ".join(m.content or "" for m in await store.get_history("t"))
        assert await _owed(store) == []


async def test_another_persons_put_waits_for_the_owed_copy(tmp_path: Path) -> None:
    async with Host(_config(tmp_path), [MemorySqlite()], discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host, history_delay=60)
        first = HumanMessage("I am Ada.", id="u1")
        await _Thread(saver, "group", user_id="ada").put([first])
        second = _Thread(saver, "group", user_id="bob")
        second.step = 1
        await second.put([first, HumanMessage("I am Bob.", id="u2")])
        await saver.aflush()
        stored = await store.get_history("group")
        assert [(m.content, (m.metadata or {}).get("user_id")) for m in stored] == [
            ("I am Ada.", "ada"),
            ("I am Bob.", "bob"),
        ]


async def test_a_failed_copy_is_raised_by_aflush_and_stays_owed(tmp_path: Path) -> None:
    async with Host(_config(tmp_path), [MemorySqlite()], discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host, history_delay=60)
        odd = HumanMessage("Bytes.", id="b1", additional_kwargs={"blob": b"\x00\x01"})
        thread = _Thread(saver, "t")
        await thread.put([odd])  # the checkpoint is the graph's: it is kept
        with pytest.raises(TypeError):
            await saver.aflush()
        assert await store.get_history("t") == []
        assert len(await _owed(store)) == 1
        with pytest.raises(TypeError):
            await saver.aflush()  # still owed: each flush tries once more
        newest = await saver.aget_tuple({"configurable": {"thread_id": "t"}})
        assert newest is not None
        assert newest.checkpoint["channel_values"]["messages"] == [odd]
        # The graph moves on without it: the next copy succeeds and takes every marker.
        await thread.put([HumanMessage("Plain.", id="b2")])
        await saver.aflush()
        assert [m.content for m in await store.get_history("t")] == ["Plain."]
        assert await _owed(store) == []


@pytest.mark.parametrize("delay", [-1, 61, True, "0.1"])
def test_history_delay_is_seconds_from_0_to_60(delay: Any) -> None:
    class _NoHost:
        def capability(self, cap: Any) -> Any:
            return None

    with pytest.raises(ValueError, match="history_delay"):
        AalisSaver(_NoHost(), history_delay=delay)


async def test_a_clear_while_a_copy_runs_neither_waits_for_it_nor_lets_it_back(
    tmp_path: Path,
) -> None:
    """The copy started before the clear's hold would wait for the hold while the clear
    waited for the copy (30 s, then a failed clear row): it is cancelled and made again
    inside the clear, where it finds nothing left to copy."""
    plugins = [MemorySqlite(), LangGraphThreads()]
    async with Host(_config(tmp_path), plugins, discover=False) as host:
        store = host.capability(memory).use
        saver = AalisSaver(host, history_delay=0.01)
        newest = saver._newest_value
        reading = asyncio.Event()

        async def slow(thread_id: str, channel: str) -> Any:
            found = await newest(thread_id, channel)
            reading.set()
            await asyncio.sleep(0.3)  # the copy is running when the clear begins
            return found

        saver._newest_value = slow  # type: ignore[method-assign]
        await _Thread(saver, "t").put(_turns(4))
        await asyncio.wait_for(reading.wait(), 10)
        loop = asyncio.get_running_loop()
        began = loop.time()
        rows = await run_clear(host, "session", session_id="t")
        assert loop.time() - began < 10
        assert all(r.success for r in rows), rows
        await asyncio.sleep(0.5)
        await saver.aflush()
        assert await store.get_history("t") == []
        assert await store.list_metadata(thread_namespace("t")) == []
        assert await _owed(store) == []


async def test_another_saver_never_takes_a_copy_it_does_not_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second saver's recovery leaves alone what a live saver of this process owes, and
    markers of another channel: taking them copied a thread twice at once, or (another
    channel, absent from the thread) wiped its history."""
    monkeypatch.setattr(saver_module, "RECOVER_AFTER_MS", 0)
    async with Host(_config(tmp_path), [MemorySqlite()], discover=False) as host:
        store = host.capability(memory).use
        first = AalisSaver(host, history_delay=60)
        thread = _Thread(first, "t")
        await thread.put(_turns(2))
        await first.aflush()
        await thread.put(_turns(4))  # owed by ``first``
        other = AalisSaver(host, messages="chat", history_delay=60)
        await _Thread(other, "u").put([])
        await other.aflush()
        assert len(await store.get_history("t")) == 2  # untouched by ``other``
        third = AalisSaver(host, history_delay=60)
        await third.aflush()
        assert len(await store.get_history("t")) == 2  # still ``first``'s to make
        await first.aflush()
        assert len(await store.get_history("t")) == 4
        assert await _owed(store) == []
