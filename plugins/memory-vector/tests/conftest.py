"""Fixtures of memory-vector's tests: a real host on memory-inmemory with the contracts'
reference embedder (hashing) and vector store (in memory) as providers."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from aalis_api_embedding import HashEmbedder, embedding
from aalis_api_vectorstore import InMemoryVectorStore, vectorstore

from aalis_core import Plugin

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


class SwitchableEmbedder:
    """The hash embedder whose model can be swapped, gated or broken by the test."""

    kind = "lexical"

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.gate: asyncio.Event | None = None
        self.fail: Exception | None = None
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        return await self.inner.embed_query(text)


class Providers(Plugin):
    """Provides ``embedding`` and ``vectorstore`` for the tests."""

    name = "test-vector-providers"
    provides = (embedding, vectorstore)

    def __init__(self) -> None:
        self.embedder = SwitchableEmbedder()
        self.store = InMemoryVectorStore()

    async def start(self, ctx: Any) -> None:
        ctx.provide(embedding, self.embedder)
        ctx.provide(vectorstore, self.store)


@pytest.fixture
def aalis(tmp_path: Any) -> Any:
    """Run ``.venv/bin/aalis ARGS`` in ``tmp_path`` (a fresh directory: the embedded
    default unless the test writes an ``aalis.toml``)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).with_name("aalis")
    assert exe.exists(), f"{exe} is missing; run ./scripts/setup"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
        return subprocess.run(
            [str(exe), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    return run
