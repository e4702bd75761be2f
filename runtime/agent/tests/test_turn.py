"""run_turn: the one-turn API every host uses (and ``aalis chat`` runs), on memory-inmemory."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from aalis_agent import (
    SUMMARY_HEADER,
    SyncHost,
    TurnError,
    TurnModelFailed,
    TurnReplyNotSaved,
    TurnSettings,
    build_prompt,
    run_turn,
)
from aalis_api_llm import ChatModel
from aalis_api_memory import CompressionUsage, memory
from aalis_schema_message import Message

from aalis_core import Plugin, hookimpl, hookspec
from aalis_core.testing import running_host

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


@attrs.frozen
class Usage:
    prompt_tokens: int
    completion_tokens: int


@attrs.frozen
class Result:
    content: str
    usage: Usage | None = None


class EchoModel:
    """Answers with what it was sent, so a test can see the prompt; records every call."""

    def __init__(self, window: int = 8192, usage: Usage | None = None) -> None:
        self._window = window
        self._usage = usage
        self.prompts: list[list[Message]] = []
        self.max_tokens: list[int | None] = []

    @property
    def id(self) -> str:
        return "echo"

    @property
    def context_window(self) -> int:
        return self._window

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Result:
        self.prompts.append(list(messages))
        self.max_tokens.append(max_tokens)
        last = messages[-1].content or ""
        return Result(content=f"echo: {last}", usage=self._usage)


class FailingModel(EchoModel):
    async def chat(self, messages: Sequence[Message], **kwargs: Any) -> Result:
        raise RuntimeError("the endpoint is down")


class SavedSpec:
    @hookspec
    def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None: ...


class Events(Plugin):
    name = "test-events"

    def __init__(self) -> None:
        self.usage: list[tuple[str, str | None, CompressionUsage]] = []
        self.saved: list[list[Message]] = []

    @hookimpl
    def token_usage(self, session_id: str, platform: str | None, usage: CompressionUsage) -> None:
        self.usage.append((session_id, platform, usage))

    @hookimpl
    def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None:
        self.saved.append(list(messages))


class Summary:
    """A compression service that has a summary for every session."""

    @attrs.frozen
    class Record:
        text: str

    async def summary(self, session_id: str) -> Summary.Record:
        return Summary.Record(text=f"earlier talk in {session_id}")


def _specs() -> list[Any]:
    import aalis_api_memory._hookspecs as specs

    return [] if hasattr(specs, "memory_messages_saved") else [SavedSpec]


SETTINGS = TurnSettings(system_prompt="be brief", platform="tests", max_reply_tokens=100)


async def test_a_turn_saves_both_messages_and_reports(tmp_path: Path) -> None:
    events = Events()
    model = EchoModel(usage=Usage(prompt_tokens=40, completion_tokens=7))
    async with running_host(
        [inmemory.MemoryInmemory(), events], data_dir=tmp_path, hookspecs=_specs()
    ) as host:
        store = host.capability(memory).use
        first = await run_turn(host, store, model, "s", "hello", settings=SETTINGS)
        second = await run_turn(
            host, store, model, "s", "again", settings=SETTINGS, reply_metadata={"x": 1}
        )
        stored = await store.get_history("s", math.inf)
    assert [(m.role, m.content) for m in stored] == [
        ("user", "hello"),
        ("assistant", "echo: hello"),
        ("user", "again"),
        ("assistant", "echo: again"),
    ]
    assert stored == [first.user, first.reply, second.user, second.reply]
    stamps = [m.timestamp for m in stored]
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == 4
    assert stored[1].metadata == {"platform": "tests", "model": "echo"}
    assert stored[3].metadata == {"platform": "tests", "model": "echo", "x": 1}
    assert stored[0].metadata == {"platform": "tests"}
    # The second prompt: system prompt, then the whole conversation so far.
    assert [(m.role, m.content) for m in model.prompts[1]] == [
        ("system", "be brief"),
        ("user", "hello"),
        ("assistant", "echo: hello"),
        ("user", "again"),
    ]
    assert model.max_tokens == [100, 100]
    # token_usage after each model call, with the provider's own figures.
    assert [(sid, platform) for sid, platform, _ in events.usage] == [("s", "tests")] * 2
    usage = events.usage[1][2]
    assert usage.used == 47
    assert usage.context_window == 8192
    assert usage.token_budget == 8092
    assert usage.history_messages == 4
    assert second.usage == usage
    # memory_messages_saved after each save, as stored.
    assert events.saved == [[m] for m in stored]


async def test_the_prompt_fits_the_budget(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        for i in range(30):
            await store.save_message(
                "s", Message(role="user" if i % 2 else "assistant", content=f"message {i} " * 20)
            )
        await store.save_message("s", Message(role="user", content="the newest"))
        model = EchoModel(window=600)
        plan = await build_prompt(store, model, "s", settings=SETTINGS, compression=Summary())
    assert plan.messages[0].content == "be brief"
    assert plan.messages[1].content == SUMMARY_HEADER + "earlier talk in s"
    assert plan.messages[-1].content == "the newest"
    assert plan.usage.trimmed
    assert plan.usage.history_messages == 31
    assert plan.tokens <= plan.usage.token_budget == 500
    assert 2 < len(plan.messages) < 33


async def test_usage_is_estimated_when_the_model_reports_none(tmp_path: Path) -> None:
    events = Events()
    async with running_host(
        [inmemory.MemoryInmemory(), events], data_dir=tmp_path, hookspecs=_specs()
    ) as host:
        turn = await run_turn(
            host, host.capability(memory).use, EchoModel(), "s", "hi", settings=SETTINGS
        )
    assert turn.usage.used > turn.prompt.tokens > 0


async def test_a_failing_model_keeps_the_question_and_reports_nothing(tmp_path: Path) -> None:
    events = Events()
    async with running_host(
        [inmemory.MemoryInmemory(), events], data_dir=tmp_path, hookspecs=_specs()
    ) as host:
        store = host.capability(memory).use
        with pytest.raises(TurnModelFailed, match="the model failed: the endpoint is down") as info:
            await run_turn(host, store, FailingModel(), "s", "hello?", settings=SETTINGS)
        stored = await store.get_history("s", math.inf)
    assert stored == [info.value.user]
    assert events.usage == []


class NoAssistantSaves:
    """The real store, except that it refuses assistant messages (a full disk, say)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def save_message(self, session_id: str, message: Message) -> None:
        if message.role == "assistant":
            raise OSError("disk full")
        await self._inner.save_message(session_id, message)


async def test_a_reply_that_cannot_be_saved_is_still_returned(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        with pytest.raises(TurnReplyNotSaved, match="disk full") as info:
            await run_turn(host, NoAssistantSaves(store), EchoModel(), "s", "q", settings=SETTINGS)
        assert info.value.content == "echo: q"
        assert [m.role for m in await store.get_history("s", math.inf)] == ["user"]


async def test_bad_input_changes_nothing(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        with pytest.raises(ValueError, match="non-empty text"):
            await run_turn(host, store, EchoModel(), "s", "   ")
        with pytest.raises(ValueError, match="session id"):
            await run_turn(host, store, EchoModel(), "", "hi")
        assert await store.get_history("s", math.inf) == []


async def test_a_store_that_fails_first_is_a_turn_error(tmp_path: Path) -> None:
    class Broken:
        async def save_message(self, session_id: str, message: Message) -> None:
            raise OSError("read-only database")

    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        model = EchoModel()
        with pytest.raises(TurnError, match="read-only database"):
            await run_turn(host, Broken(), model, "s", "hi")
    assert model.prompts == []


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="max_reply_tokens"):
        TurnSettings(max_reply_tokens=0)
    with pytest.raises(ValueError, match="contribution_timeout"):
        TurnSettings(contribution_timeout=-1)


def test_a_structural_model_is_a_turn_model() -> None:
    assert isinstance(EchoModel(), ChatModel)


# -- the synchronous facade ---------------------------------------------------------------


def test_sync_host_runs_turns_from_plain_code(tmp_path: Path) -> None:
    events = Events()
    config = {"host": {"data_dir": str(tmp_path)}}
    with SyncHost(
        config, [inmemory.MemoryInmemory(), events], discover=False, hookspecs=_specs()
    ) as aalis:
        model = EchoModel()
        reply = aalis.turn("nb", "from a notebook", model=model, settings=SETTINGS)
        assert reply.content == "echo: from a notebook"
        assert [m.content for m in aalis.history("nb")] == ["from a notebook", reply.content]
        assert hasattr(aalis.memory, "get_history")
        assert not hasattr(aalis.memory, "no_such_method")
        rows = aalis.clear("session", "nb")
        assert any(r.type == "context" and r.success for r in rows)
        assert aalis.history("nb") == []
        with pytest.raises(LookupError, match="no llm provider"):
            aalis.turn("nb", "no model here")
    assert len(events.usage) == 1
    with pytest.raises(RuntimeError, match="closed"):
        aalis.turn("nb", "after close", model=model)


def test_sync_host_works_inside_a_running_loop(tmp_path: Path) -> None:
    """A notebook cell runs in an event loop of its own: the facade must not care."""
    import asyncio

    async def cell() -> list[Message]:
        with SyncHost(
            {"host": {"data_dir": str(tmp_path)}}, [inmemory.MemoryInmemory()], discover=False
        ) as aalis:
            aalis.memory.save_message("s", Message(role="user", content="in a loop"))
            return aalis.history("s")

    assert [m.content for m in asyncio.run(cell())] == ["in a loop"]


def test_sync_host_reports_config_errors_and_leaves_no_thread(tmp_path: Path) -> None:
    import threading

    before = threading.active_count()
    with pytest.raises(Exception, match="nonsense"):
        SyncHost({"host": {"nonsense": 1}}, discover=False)
    assert threading.active_count() == before


# -- prompt contributions (the hookspec ships with semantic recall) --------------------------


async def test_contributions_go_before_the_newest_user_message(tmp_path: Path) -> None:
    prompt = pytest.importorskip("aalis_agent._prompt")

    class Notes(Plugin):
        name = "test-notes"

        @hookimpl
        async def prompt_contributions(self, request: Any) -> list[Any]:
            return [prompt.PromptBlock(content=f"note about {request.query}")]

    async with running_host([inmemory.MemoryInmemory(), Notes()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        model = EchoModel()
        await run_turn(host, store, model, "s", "first", settings=SETTINGS)
        turn = await run_turn(host, store, model, "s", "second", settings=SETTINGS)
        stored = await store.get_history("s", math.inf)
    sent = model.prompts[1]
    assert [m.content for m in sent] == [
        "be brief",
        "first",
        "echo: first",
        "note about second",
        "second",
    ]
    assert [b.source for b in turn.prompt.contributions] == ["test-notes"]
    # Blocks are never saved.
    assert [m.content for m in stored] == ["first", "echo: first", "second", "echo: second"]


def test_the_session_clock_never_repeats_within_a_millisecond() -> None:
    from aalis_agent import SessionClock

    clock = SessionClock()
    stamps = [clock.next("s") for _ in range(500)]
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == 500
    # Sessions are independent, and a floor (the newest stored timestamp) is respected.
    assert clock.next("other", at_least=stamps[-1] + 1000) == stamps[-1] + 1000
