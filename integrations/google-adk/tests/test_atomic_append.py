"""``append_event`` lands an event and its state delta together or not at all, over a real
memory-sqlite store with a fault injected at each write it makes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aalis_api_memory import memory
from aalis_google_adk import AalisSessionService, aalis_session_id
from aalis_plugin_memory_sqlite import MemorySqlite
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

from aalis_core import Host

SID = aalis_session_id("app", "ada", "s1")


class Injected(RuntimeError):
    pass


class Faulty:
    """The real store, except that the ``nth`` call of ``method`` raises (before it writes,
    or, with ``after=True``, once it has written: a crash right after the write)."""

    def __init__(self, real: Any, method: str, nth: int = 1, *, after: bool = False) -> None:
        self._real, self._method, self._left, self._after = real, method, nth, after

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._real, name)
        if name != self._method:
            return target

        async def call(*args: Any, **kwargs: Any) -> Any:
            self._left -= 1
            if self._left == 0 and not self._after:
                raise Injected(f"{name} failed")
            result = await target(*args, **kwargs)
            if self._left == 0:
                raise Injected(f"crashed after {name}")
            return result

        return call


@pytest.fixture
async def host(tmp_path: Path) -> AsyncGenerator[Host, None]:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite()], discover=False) as started:
        yield started


def _event(text: str, **state: Any) -> Event:
    return Event(
        author="a",
        invocation_id="inv",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=state),
    )


async def _fresh(host: Host) -> tuple[list[str], dict[str, Any]]:
    """What a new service (another process) reads: the events' texts and the state."""
    session = await AalisSessionService(host).get_session(
        app_name="app", user_id="ada", session_id="s1"
    )
    assert session is not None
    texts = [p.text or "" for e in session.events for p in (e.content.parts or []) if e.content]
    return texts, dict(session.state)


WRITES = [
    ("save_message", False),  # the event's message is not written
    ("save_message", True),  # written, then the process dies
    ("commit_metadata", False),  # the state is not written
    ("commit_metadata", True),  # the state is written, then the process dies
]


@pytest.mark.parametrize(("method", "after"), WRITES)
async def test_a_failed_write_never_leaves_half_an_event(
    host: Host, method: str, after: bool
) -> None:
    real = host.capability(memory)
    setup = AalisSessionService(host)
    session = await setup.create_session(app_name="app", user_id="ada", session_id="s1")
    await setup.append_event(session, _event("first", step=1, **{"user:city": "Lisbon"}))

    faulty = AalisSessionService(
        host, memory=SimpleNamespace(use=Faulty(real.use, method, after=after))
    )
    session = await faulty.get_session(app_name="app", user_id="ada", session_id="s1")
    assert session is not None
    with pytest.raises(Injected):
        await faulty.append_event(session, _event("second", step=2, **{"user:city": "Porto"}))

    texts, state = await _fresh(host)
    landed = texts == ["first", "second"]
    assert landed or texts == ["first"], texts
    if landed:
        assert (state["step"], state["user:city"]) == (2, "Porto")
    else:
        assert (state["step"], state["user:city"]) == (1, "Lisbon")
    # Read again: the same, and the event is stored once.
    assert await _fresh(host) == (texts, state)
    stored = await real.use.get_history(SID)
    assert [m.content for m in stored] == texts

    # The session goes on normally afterwards.
    session = await setup.get_session(app_name="app", user_id="ada", session_id="s1")
    assert session is not None
    await setup.append_event(session, _event("third", step=3))
    texts, state = await _fresh(host)
    assert texts[-1] == "third"
    assert state["step"] == 3


CHILD = r"""
import asyncio, os, signal, sys
from types import SimpleNamespace
from aalis_api_memory import memory
from aalis_core import Host
from aalis_google_adk import AalisSessionService
from aalis_plugin_memory_sqlite import MemorySqlite
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types


def event(text, **state):
    return Event(author="a", invocation_id="inv",
                 content=types.Content(role="model", parts=[types.Part(text=text)]),
                 actions=EventActions(state_delta=state))


class DiesAfterItsFirstWrite:
    def __init__(self, real):
        self._real = real
    def __getattr__(self, name):
        target = getattr(self._real, name)
        if name not in ("commit_metadata", "save_message"):
            return target
        async def call(*args, **kwargs):
            await target(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)  # one write done, nothing else
        return call


async def main():
    async with Host({"host": {"data_dir": sys.argv[1]}}, [MemorySqlite()], discover=False) as host:
        service = AalisSessionService(host)
        session = await service.create_session(app_name="app", user_id="ada", session_id="s1")
        await service.append_event(session, event("first", step=1))
        dying = AalisSessionService(
            host, memory=SimpleNamespace(use=DiesAfterItsFirstWrite(host.capability(memory).use))
        )
        await dying.append_event(session, event("second", step=2))

asyncio.run(main())
"""


def test_a_process_killed_after_its_first_write_leaves_what_the_next_reader_finishes(
    tmp_path: Path,
) -> None:
    import signal
    import subprocess
    import sys

    data = tmp_path / "data"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(data)], capture_output=True, text=True, timeout=60
    )
    assert child.returncode == -signal.SIGKILL, child.stderr

    async def read() -> tuple[tuple[list[str], dict[str, Any]], list[str | None]]:
        async with Host({"host": {"data_dir": str(data)}}, [MemorySqlite()], discover=False) as h:
            seen = await _fresh(h)
            stored = await h.capability(memory).use.get_history(SID)
            return seen, [m.content for m in stored]

    (texts, state), stored = asyncio.run(read())
    assert texts == ["first", "second"]
    assert state["step"] == 2
    assert stored == ["first", "second"]


async def test_a_reader_that_finishes_an_append_first_does_not_fail_it(host: Host) -> None:
    real = host.capability(memory).use
    service = AalisSessionService(host)

    class ReaderInBetween:
        """After the journal's commit, another reader (another process) reads the session
        and so finishes the pending event before the appender saves it."""

        def __getattr__(self, name: str) -> Any:
            target = getattr(real, name)
            if name != "commit_metadata":
                return target

            async def call(*args: Any, **kwargs: Any) -> Any:
                await target(*args, **kwargs)
                await _fresh(host)

            return call

    session = await service.create_session(app_name="app", user_id="ada", session_id="s1")
    racing = AalisSessionService(host, memory=SimpleNamespace(use=ReaderInBetween()))
    await racing.append_event(session, _event("first", step=1))
    assert await _fresh(host) == (["first"], {"step": 1})
    assert [m.content for m in await real.get_history(SID)] == ["first"]
