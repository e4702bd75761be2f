"""The memory-inmemory plugin in a real host: provides memory at -100, clears as context."""

from __future__ import annotations

from pathlib import Path

import pytest
from aalis_agent import run_clear
from aalis_api_memory import ClearType, HeldMemory, memory
from aalis_plugin_memory_inmemory import InMemoryMemory, MemoryInmemory
from aalis_schema_message import Message

from aalis_core import Plugin
from aalis_core._handles import unwrap
from aalis_core.testing import running_host


class Rival(Plugin):
    """Another memory provider at the default priority (0)."""

    name = "rival-memory"
    provides = (memory,)

    async def start(self, ctx: object) -> None:
        self.store = InMemoryMemory()
        ctx.provide(memory, self.store)  # type: ignore[attr-defined]


async def test_provides_memory_wrapped_in_held_memory(tmp_path: Path) -> None:
    plugin = MemoryInmemory()
    async with running_host(plugins=[plugin], data_dir=tmp_path) as host:
        handle = host.capability(memory)
        assert handle.provider == "memory-inmemory"
        held = unwrap(handle.use)
        assert isinstance(held, HeldMemory)
        assert held.inner is plugin.store
        await handle.use.save_message("s", Message(role="user", content="hi", timestamp=1))
        assert [m.content for m in await plugin.store.get_history("s")] == ["hi"]
        [info] = host.plugins()
        assert info.state == "active"
        assert info.provides == ["memory"]


async def test_any_other_provider_outranks_it(tmp_path: Path) -> None:
    async with running_host(plugins=[MemoryInmemory(), Rival()], data_dir=tmp_path) as host:
        assert host.providers(memory) == ["rival-memory", "memory-inmemory"]
        assert host.capability(memory).provider == "rival-memory"


async def test_contributes_the_context_clear_type_and_clears_history(tmp_path: Path) -> None:
    async with running_host(plugins=[MemoryInmemory()], data_dir=tmp_path) as host:
        [(plugin, clear_type)] = host.collect_contributions("memory_clear_types")
        assert plugin == "memory-inmemory"
        assert isinstance(clear_type, ClearType)
        assert clear_type.id == "context"
        assert str(clear_type.label) == "Conversation history"
        mem = host.capability(memory).use
        await mem.save_message("s", Message(role="user", content="x"))
        results = await run_clear(host, "session", "s", types=["history"])
        assert [(r.source, r.success, r.type) for r in results] == [("memory", True, "context")]
        assert await mem.get_history("s") == []


async def test_config_sets_the_query_caps(tmp_path: Path) -> None:
    plugin = MemoryInmemory()
    config = {
        "plugins": {"memory-inmemory": {"range_query_limit": 3, "cross_session_max_limit": 7}}
    }
    async with running_host(plugins=[plugin], data_dir=tmp_path, config=config) as host:
        assert plugin.store is not None
        assert plugin.store.range_query_limit == 3
        assert host.capability(memory).use.cross_session_max_limit == 7


@pytest.mark.parametrize(
    "table",
    [{"range_query_limit": 0}, {"cross_session_max_limit": "many"}, {"unknown": 1}],
)
def test_bad_config_fails_the_plugin_before_start(tmp_path: Path, table: dict[str, object]) -> None:
    from aalis_core.testing import make_test_host, plugin_config_error

    host = make_test_host(
        [MemoryInmemory()], {"plugins": {"memory-inmemory": table}}, data_dir=tmp_path
    )
    error = plugin_config_error(host, "memory-inmemory")
    assert error.key == next(iter(table))


def test_store_rejects_bad_caps() -> None:
    with pytest.raises(ValueError, match="range_query_limit"):
        InMemoryMemory(range_query_limit=0)
    with pytest.raises(ValueError, match="cross_session_max_limit"):
        InMemoryMemory(cross_session_max_limit=True)
