"""examples/minimal_backend.py, the worked example of docs/backends/implementing.md,
passes the conformance kit exactly as that page tells a backend author to run it."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from aalis_api_memory_conformance import MemoryServiceConformance

ROOT = Path(__file__).resolve().parents[2]


def _load() -> Any:
    spec = importlib.util.spec_from_file_location(
        "aalis_docs_minimal_backend", ROOT / "examples" / "minimal_backend.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MinimalSqliteMemory = _load().MinimalSqliteMemory


class TestMinimalBackend(MemoryServiceConformance):
    @pytest_asyncio.fixture
    async def memory(self) -> AsyncIterator[Any]:
        store = MinimalSqliteMemory()
        yield store
        store.close()


def _plugin_block() -> str:
    """The plugin class shown in section 2 of docs/backends/implementing.md."""
    text = (ROOT / "docs" / "backends" / "implementing.md").read_text(encoding="utf-8")
    section = text[text.index("## 2. The plugin") : text.index("## 3. The conformance kit")]
    start = section.index("```python\n") + len("```python\n")
    return section[start : section.index("```", start)]


async def test_the_plugin_of_the_guide_provides_memory(tmp_path: Path) -> None:
    from aalis_agent import run_clear
    from aalis_api_memory import memory
    from aalis_schema_message import Message

    from aalis_core.testing import running_host

    namespace: dict[str, Any] = {"MinimalSqliteMemory": MinimalSqliteMemory}
    exec(_plugin_block(), namespace)
    plugin = namespace["MemoryMinimal"]()
    async with running_host([plugin], data_dir=tmp_path / "data") as host:
        handle = host.capability(memory)
        assert handle.provider == "memory-minimal"
        await handle.use.save_message("s1", Message(role="user", content="hi"))
        assert [m.content for m in await handle.use.get_history("s1")] == ["hi"]
        rows = await run_clear(host, "session", "s1", types=["history"])
        assert [(r.type, r.success) for r in rows] == [("context", True)]
        assert await handle.use.get_history("s1") == []
    assert (tmp_path / "data" / "minimal.db").is_file()
