"""Two hosts on one store compress, clear and save the same session at once.

Each ``Host`` has its own backend instance (its own SQLite connection and worker thread, or
its own MongoDB client), its own memory-summary and its own scripted model, exactly as two
processes would: nothing in-process is shared but the store. The models and the commits are
gated by ``asyncio`` events (each plugin gets a ``step`` callable, awaited at the named points
of a commit, that stops it after its pre-commit check), so both commits pass their checks
before either writes, in both orders.

What must hold (docs/compression.md, "Exactness under concurrency"): every archived message
is one the winning summary covers, there is exactly one divider, the loser gets
``history_changed``; a clear from the other host wins; a late save stays active.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from aalis_agent import run_clear
from aalis_api_memory import CompressionError, compression, memory
from aalis_plugin_memory_summary import MemorySummary
from aalis_schema_message import Message
from aalis_test_support.backends import drop_server_data

from aalis_core import Host
from aalis_core._markers import hookimpl
from aalis_core._plugin import Plugin

BACKENDS = ("memory-sqlite", "memory-mongodb", "memory-postgres")
SID = "shared"
T0 = 1_700_000_000_000


class _Steps:
    """The ``step`` callable of one side's plugin; ``gate_commit`` sets what it awaits."""

    def __init__(self) -> None:
        self.hook: Callable[[str], Awaitable[None]] | None = None

    async def __call__(self, name: str) -> None:
        if self.hook is not None:
            await self.hook(name)


@attrs.define
class Side:
    """One of the two hosts, with the handles the test drives."""

    name: str
    host: Host
    plugin: MemorySummary
    model: Any
    events: list[tuple[str, str | None]]
    steps: _Steps

    @property
    def memory(self) -> Any:
        return self.host.capability(memory).use

    @property
    def service(self) -> Any:
        return self.host.capability(compression).use

    def gate_commit(self, step: str = "pending-saved") -> tuple[asyncio.Event, asyncio.Event]:
        """Stop this side's next commit at ``step``: (reached, release)."""
        reached, release = asyncio.Event(), asyncio.Event()

        async def hook(name: str) -> None:
            if name == step and not reached.is_set():
                reached.set()
                await release.wait()

        self.steps.hook = hook
        return reached, release

    def shown(self) -> set[str]:
        """Contents of every conversation message this side's model was shown."""
        out: set[str] = set()
        for call in self.model.calls:
            for line in (call[-1].content or "").splitlines():
                match = re.match(r"#\d+ \w+: (.*)", line)
                if match:
                    out.add(match.group(1))
        return out


def _config(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    config: dict[str, Any] = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": name}},
        "plugins": {},
    }
    if name == "memory-sqlite":
        config["plugins"][name] = {"path": str(tmp_path / "shared.db")}
    elif name == "memory-postgres":
        uri = request.getfixturevalue("postgres_uri")  # conftest.py: the run's one server
        config["plugins"][name] = {"uri": uri, "schema": f"pair_{uuid.uuid4().hex[:16]}"}
    else:
        uri = request.getfixturevalue("mongodb_uri")
        config["plugins"][name] = {"uri": uri, "database": f"pair_{uuid.uuid4().hex[:16]}"}
    return config


def _plugin_class(name: str) -> Any:
    import importlib_metadata

    for ep in importlib_metadata.entry_points(group="aalis.plugins", name=name):
        return ep.load()
    pytest.skip(f"plugin {name} is not installed")


@pytest.fixture(params=BACKENDS)
def pair(
    request: pytest.FixtureRequest, tmp_path: Path, scripted_plugin: Any
) -> Callable[[], contextlib.AbstractAsyncContextManager[tuple[Side, Side]]]:
    name = str(request.param)
    backend = _plugin_class(name)
    config = _config(name, tmp_path, request)

    @contextlib.asynccontextmanager
    async def start() -> AsyncIterator[tuple[Side, Side]]:
        sides: list[Side] = []
        async with contextlib.AsyncExitStack() as stack:
            for label in ("A", "B"):
                model = scripted_plugin.ScriptedModel()
                model.replies.append(f'{{"summary": "summary by {label}", "keep": []}}')
                steps = _Steps()
                plugin = MemorySummary(step=steps)
                events: list[tuple[str, str | None]] = []
                recorder = _Recorder(events)
                host = Host(
                    config,
                    [backend(), scripted_plugin.ScriptedLlm(model), plugin, recorder],
                    discover=False,
                )
                await stack.enter_async_context(host)
                sides.append(Side(label, host, plugin, model, events, steps))
            try:
                yield sides[0], sides[1]
            finally:
                await drop_server_data(name, config["plugins"][name])

    return start


class _Recorder(Plugin):
    """The compression events of one host."""

    name = "pair-recorder"

    def __init__(self, events: list[tuple[str, str | None]]) -> None:
        self.events = events

    @hookimpl
    def session_compressing(self, session_id: str, status: str) -> None:
        self.events.append(("session_compressing", status))

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.events.append(("history_changed", None))


async def _seed(side: Side, turns: int = 6) -> list[Message]:
    saved = []
    for i in range(turns):
        for j, role in enumerate(("user", "assistant")):
            message = Message(role=role, content=f"{role} {i}", timestamp=T0 + 10 * i + j)
            await side.memory.save_message(SID, message)
            saved.append(message)
    return saved


async def _archived(side: Side) -> list[Message]:
    active = await side.memory.get_history(SID, math.inf)
    return [m for m in await side.memory.get_full_history(SID, math.inf) if m not in active]


def _dividers(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.kind == "event-marker"]


async def _both_at_the_commit(
    a: Side, b: Side, meanwhile: Callable[[], Awaitable[None]]
) -> tuple[asyncio.Task[None], asyncio.Task[None], asyncio.Event, asyncio.Event]:
    """Both sides compress one snapshot and stop right after their pre-commit checks.

    ``meanwhile`` runs while both models think (a live writer); once a side is at its
    commit it holds the session on its own host, so writes then go through the other.
    """
    gate_a, gate_b = a.model.hold(), b.model.hold()
    reached_a, release_a = a.gate_commit()
    reached_b, release_b = b.gate_commit()
    task_a = asyncio.create_task(a.service.compress(SID))
    task_b = asyncio.create_task(b.service.compress(SID))
    await asyncio.wait_for(asyncio.gather(a.model.entered.wait(), b.model.entered.wait()), 30)
    await asyncio.wait_for(meanwhile(), 30)
    gate_a.set()
    gate_b.set()
    await asyncio.wait_for(asyncio.gather(reached_a.wait(), reached_b.wait()), 30)
    return task_a, task_b, release_a, release_b


@pytest.mark.parametrize("first", ["A", "B"])
async def test_two_hosts_compressing_at_once_commit_once(pair: Any, first: str) -> None:
    async with pair() as (a, b):
        await _seed(a)

        async def live_writer() -> None:
            await b.memory.save_message(
                SID, Message(role="user", content="said meanwhile", timestamp=T0 + 1000)
            )

        task_a, task_b, release_a, release_b = await _both_at_the_commit(a, b, live_writer)
        winner, loser = (a, b) if first == "A" else (b, a)
        win_task, lose_task = (task_a, task_b) if first == "A" else (task_b, task_a)
        (release_a if first == "A" else release_b).set()
        await asyncio.wait_for(win_task, 30)
        (release_b if first == "A" else release_a).set()
        with pytest.raises(CompressionError) as caught:
            await asyncio.wait_for(lose_task, 30)
        assert caught.value.reason_code == "history_changed"

        record = await a.service.summary(SID)
        assert record is not None
        assert record.text == f"summary by {winner.name}"
        archived = await _archived(a)
        conversation = [m for m in archived if m.kind != "event-marker"]
        assert conversation  # the winner did archive
        assert {m.content for m in conversation} <= winner.shown()
        full = await a.memory.get_full_history(SID, math.inf)
        assert len(_dividers(full)) == 1
        active = await a.memory.get_history(SID, math.inf)
        assert [m.content for m in active if not m.is_control] == ["said meanwhile"]
        assert ("session_compressing", "error") in loser.events
        assert ("session_compressing", "done") not in loser.events


@pytest.mark.parametrize("types", [None, ["summary"]])
async def test_a_clear_from_the_other_host_during_the_commit_wins(
    pair: Any, types: list[str] | None
) -> None:
    async with pair() as (a, b):
        await _seed(a, turns=2)
        # A previous summary exists, so a summary-only clear has something to clear.
        a.model.replies.insert(0, '{"summary": "the old conversation", "keep": []}')
        await a.service.compress(SID)
        await _seed(a, turns=4)
        before_full = await a.memory.get_full_history(SID, math.inf)
        reached, release = a.gate_commit()
        task = asyncio.create_task(a.service.compress(SID))
        await asyncio.wait_for(reached.wait(), 30)
        await asyncio.wait_for(run_clear(b.host, "session", session_id=SID, types=types), 30)
        release.set()
        with pytest.raises(CompressionError) as caught:
            await asyncio.wait_for(task, 30)
        assert await a.service.summary(SID) is None  # the cleared summary never comes back
        if types is None:
            assert caught.value.reason_code == "cleared"
            assert await a.memory.get_full_history(SID, math.inf) == []
        else:
            assert caught.value.reason_code == "history_changed"
            assert await a.memory.get_full_history(SID, math.inf) == before_full


async def test_a_clear_from_the_other_host_while_the_model_runs_wins(pair: Any) -> None:
    async with pair() as (a, b):
        await _seed(a)
        a.model.hold()
        task = asyncio.create_task(a.service.compress(SID))
        await asyncio.wait_for(a.model.entered.wait(), 30)
        await asyncio.wait_for(run_clear(b.host, "session", session_id=SID), 30)
        assert a.model.gate is not None
        a.model.gate.set()
        with pytest.raises(CompressionError) as caught:
            await asyncio.wait_for(task, 30)
        assert caught.value.reason_code == "cleared"
        assert await a.service.summary(SID) is None
        assert await a.memory.get_full_history(SID, math.inf) == []


@pytest.mark.parametrize("where", ["other host", "same host"])
async def test_a_late_timestamp_save_during_the_commit_stays_active(pair: Any, where: str) -> None:
    async with pair() as (a, b):
        await _seed(a)
        reached, release = a.gate_commit()
        task = asyncio.create_task(a.service.compress(SID))
        await asyncio.wait_for(reached.wait(), 30)
        late = Message(role="user", content="late but old", timestamp=T0 + 15, id="late")
        writer = b if where == "other host" else a
        save = asyncio.create_task(writer.memory.save_message(SID, late))
        if where == "same host":
            await asyncio.sleep(0.05)
            assert not save.done()  # held until the commit is done
        else:
            await asyncio.wait_for(save, 30)
        release.set()
        await asyncio.wait_for(task, 30)
        await asyncio.wait_for(save, 30)
        archived = [m for m in await _archived(a) if m.kind != "event-marker"]
        assert {m.content for m in archived} <= a.shown()
        assert "late but old" not in a.shown()
        active = await a.memory.get_history(SID, math.inf)
        assert late in active
        assert len(archived) == 12  # every message of the snapshot, nothing else
