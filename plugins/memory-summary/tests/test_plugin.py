"""The plugin around the service: configuration, availability, archive failures, chunking,
shutdown. These run on the in-memory reference backend only (the store is not what they test)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from aalis_api_memory import CompressionError, CompressionUsage, compression, memory
from aalis_plugin_memory_summary import MemorySummary
from aalis_plugin_memory_summary._records import SUMMARY_NAMESPACE
from aalis_schema_message import Message

from aalis_core import Host
from aalis_core._handles import unwrap
from aalis_core._plugin import Plugin

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")
InMemoryMemory = inmemory.InMemoryMemory
MemoryInmemory = inmemory.MemoryInmemory


def m(role: str, text: str, ts: int) -> Message:
    return Message(role=role, content=text, timestamp=ts)


def host_with(*plugins: Plugin, config: dict[str, Any] | None = None) -> Host:
    return Host(config or {}, list(plugins), discover=False)


def test_config_errors_name_the_key() -> None:
    from aalis_core.testing import plugin_config_error

    def error(table: dict[str, Any]) -> str:
        host = host_with(MemorySummary(), config={"plugins": {"memory-summary": table}})
        return str(plugin_config_error(host, "memory-summary"))

    text = error({"compress_at": 2})
    assert "plugins.memory-summary" in text
    assert "compress_at" in text
    assert "summariser" in error({"summariser": "gpt"})
    assert "history_limit" in error({"platforms": {"tg": {"history_limit": -1}}})


async def test_without_memory_it_starts_and_answers_unavailable() -> None:
    async with host_with(MemorySummary()) as host:
        [info] = host.plugins()
        assert info.state == "active"
        service = host.capability(compression).use
        with pytest.raises(CompressionError) as excinfo:
            await service.compress("s")
        assert excinfo.value.reason_code == "unavailable"
        with pytest.raises(CompressionError):
            await service.summary("s")
        # the lines still answer from configuration
        assert await service.compress_at("s") == 0.7


class FailingArchive(InMemoryMemory):
    """Exact archiving whose commit fails (the store refuses the write)."""

    async def archive_exact(self, session_id: str, ids: Any, **kwargs: Any) -> int:
        raise RuntimeError("disk full")


class FailingPositional(InMemoryMemory):
    """A backend without exact archiving (the positional commit), whose archive fails."""

    history_snapshot = None
    archive_exact = None

    async def archive_span(self, session_id: str, count: Any, keep: Any = ()) -> int:
        raise RuntimeError("disk full")


class FailingMemory(Plugin):
    name = "failing-memory"
    provides = (memory,)

    def __init__(self, store: type[InMemoryMemory] = FailingArchive) -> None:
        self.store = store

    async def start(self, ctx: Any) -> None:
        ctx.provide(memory, self.store())


@pytest.mark.parametrize("store", [FailingArchive, FailingPositional])
async def test_an_archive_failure_restores_the_previous_summary(store: Any) -> None:
    async with host_with(
        FailingMemory(store),
        MemorySummary(),
        config={"plugins": {"memory-summary": {"summariser": "extractive"}}},
    ) as host:
        store = host.capability(memory).use
        await store.save_message("s", m("user", "Lisbon budget question.", 1000))
        await store.save_message("s", m("assistant", "About 900 euros.", 1500))
        previous = {
            "text": "old summary",
            "covered_from": 1,
            "covered_to": 2,
            "updated_at": 3,
            "model": "x",
        }
        await store.save_metadata(SUMMARY_NAMESPACE, "s", previous)
        service = host.capability(compression).use
        with pytest.raises(CompressionError) as excinfo:
            await service.compress("s")
        assert excinfo.value.reason_code == "archive_failed"
        assert "disk full" in excinfo.value.message
        record = await service.summary("s")
        assert record is not None
        assert record.text == "old summary"
        assert len(await store.get_history("s", math.inf)) == 2
        assert not service.running("s")


#: A chunk's summary, long enough for its span (a far too short one is rejected).
PART = "part {}: the user sent numbered messages, each padded with the same filler words"


async def test_a_long_span_is_summarised_in_cumulative_chunks(scripted_plugin: Any) -> None:
    model = scripted_plugin.ScriptedModel()
    model.context_window = 3000  # room for a few hundred tokens of transcript per call
    model.replies.extend(
        f'{{"summary": "{PART.format(i)}", "keep": ["#39"]}}' for i in range(1, 30)
    )
    plugins = [MemoryInmemory(), scripted_plugin.ScriptedLlm(model), MemorySummary()]
    async with host_with(
        *plugins, config={"plugins": {"memory-summary": {"keep_ratio": 1.0}}}
    ) as host:
        store = host.capability(memory).use
        for i in range(40):
            await store.save_message(
                "s", m("user", f"message {i} " + "padding words " * 8, 1000 + i)
            )
        await host.capability(compression).use.compress("s")
        calls = len(model.calls)
        assert calls >= 2
        prompts = [call[-1].content or "" for call in model.calls]
        assert "Previous summary: (none)" in prompts[0]
        for i in range(1, calls):
            assert f"Previous summary:\n{PART.format(i)}\n" in prompts[i]
        # every message was shown exactly once, in order
        shown = [
            line.split(" ", 1)[0]
            for p in prompts
            for line in p.splitlines()
            if line.startswith("#")
        ]
        # (the newest question has no answer yet: it stays active, unshown)
        assert shown == [f"#{i}" for i in range(39)]
        record = await host.capability(compression).use.summary("s")
        assert record is not None
        assert record.text == PART.format(calls)
        active = await store.get_history("s", math.inf)
        assert active[0].kind == "event-marker"
        assert (active[1].content or "").startswith("message 39 ")


async def test_stopping_the_host_lets_a_running_auto_compression_finish(
    scripted_plugin: Any,
) -> None:
    model = scripted_plugin.ScriptedModel()
    gate = model.hold()
    plugins = [MemoryInmemory(), scripted_plugin.ScriptedLlm(model), MemorySummary()]
    host = host_with(*plugins)
    async with host:
        store = unwrap(host.capability(memory).use)  # still readable after the host stopped
        await store.save_message("s", m("user", "hello", 1000))
        await store.save_message("s", m("assistant", "hi", 1001))
        usage = CompressionUsage(used=900, context_window=1000, token_budget=1000, compressible=800)
        await host.emit("token_usage", session_id="s", platform=None, usage=usage)
        await asyncio.wait_for(model.entered.wait(), 10)
        asyncio.get_running_loop().call_later(0.05, gate.set)
    # the host waited for the compression before stopping the store
    assert [x.kind for x in await store.get_history("s", math.inf)] == ["event-marker"]
