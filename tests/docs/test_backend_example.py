"""examples/minimal_backend.py, the worked example of docs/backends/implementing.md,
passes the conformance kit exactly as that page tells a backend author to run it."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from aalis_api_memory.testing import MemoryServiceConformance

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
