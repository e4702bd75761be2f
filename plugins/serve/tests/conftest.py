"""Per test: a real host (memory-sqlite, memory-summary on the extractive summariser, the
serve plugin) and a real uvicorn server on a loopback port (aalis_plugin_serve.testing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aalis_plugin_serve.testing import Served, host_config, running

from aalis_core._host import Host


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    async with Host(host_config(tmp_path)) as host, running(host) as server:
        yield server
