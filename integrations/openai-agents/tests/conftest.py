"""A real host for the adapter's tests: memory-sqlite, memory-summary (extractive) and
memory-vector over embedding-hash and vectorstore-sqlite, all discovered as installed; the
network-bound and heavy plugins are disabled so the tests run offline in seconds."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import ClearRequest
from aalis_schema_message import Message

from aalis_core import Host, Plugin, hookimpl

DISABLED = [
    "memory-mongodb",
    "memory-postgres",
    "vectorstore-pgvector",
    "llm-openai",
    "embedding-openai",
    "embedding-local",
]


def host_config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(tmp_path / "data")},
        "plugins": {"disabled": DISABLED, **extra},
        "capabilities": {"memory": {"provider": "memory-sqlite"}},
    }


class Recorder(Plugin):
    """Records clear requests and the delete / save announcements the session makes."""

    name = "test-recorder"

    def __init__(self) -> None:
        self.clears: list[ClearRequest] = []
        self.deleted: list[dict[str, Any]] = []
        self.saved: list[list[Message]] = []

    @hookimpl
    async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
        self.clears.append(request)
        await call_next()

    @hookimpl
    def memory_messages_deleted(
        self, session_id: str, timestamps: Sequence[int], ids: Sequence[str]
    ) -> None:
        self.deleted.append({"session_id": session_id, "timestamps": list(timestamps), "ids": ids})

    @hookimpl
    def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None:
        self.saved.append(list(messages))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def config(tmp_path: Path) -> dict[str, Any]:
    return host_config(tmp_path)


@pytest.fixture
async def host(config: dict[str, Any], recorder: Recorder) -> AsyncIterator[Host]:
    async with Host(config, [recorder]) as started:
        yield started
