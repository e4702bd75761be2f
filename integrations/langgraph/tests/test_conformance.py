"""PyPI's ``langgraph-checkpoint-conformance`` on ``AalisSaver``: every capability, no skip.

Run on a real SQLite store (memory-sqlite) and on the in-memory reference provider, through a
started host, the way an app uses the saver.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aalis_langgraph import AalisSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from aalis_core import Host


@pytest.mark.parametrize("provider", ["memory-sqlite", "memory-inmemory"])
async def test_the_saver_passes_the_whole_conformance_suite(tmp_path: Path, provider: str) -> None:
    config = {
        "host": {"data_dir": str(tmp_path / "data")},
        "capabilities": {"memory": {"provider": provider}},
    }
    hosts: list[Host] = []

    @checkpointer_test(name=f"AalisSaver[{provider}]")
    async def factory() -> AsyncIterator[AalisSaver]:
        host = Host(config, discover=False, plugins=_providers())
        await host.start()
        hosts.append(host)
        try:
            yield AalisSaver(host)
        finally:
            await host.stop()

    report = await validate(factory)
    failures = {
        name: result.failures for name, result in report.results.items() if not result.passed
    }
    assert failures == {}
    assert set(report.results) == {c.value for c in ALL_CAPABILITIES}
    assert all(r.detected and r.tests_skipped == 0 for r in report.results.values())
    assert sum(r.tests_passed for r in report.results.values()) > 50
    assert hosts  # a fresh host (and store) per capability suite


def _providers() -> list[object]:
    from aalis_plugin_memory_inmemory import MemoryInmemory
    from aalis_plugin_memory_sqlite import MemorySqlite

    return [MemorySqlite(), MemoryInmemory()]
