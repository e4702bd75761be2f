from collections.abc import AsyncIterator

import pytest_asyncio
from aalis_api_memory import HeldMemory
from aalis_api_memory_conformance import MemoryServiceConformance
from aalis_plugin_memory_inmemory import InMemoryMemory


class TestInMemoryConformance(MemoryServiceConformance):
    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self) -> AsyncIterator[InMemoryMemory]:
        yield InMemoryMemory()

    def corrupt_metadata(
        self, memory: InMemoryMemory, namespace: str, key: str, raw_text: str
    ) -> None:
        memory.put_raw_metadata(namespace, key, raw_text)


class TestThroughHeldMemory(MemoryServiceConformance):
    """The adapter every provider is wrapped in must be transparent to the whole contract."""

    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self) -> AsyncIterator[HeldMemory]:
        yield HeldMemory(InMemoryMemory())

    def corrupt_metadata(self, memory: HeldMemory, namespace: str, key: str, raw_text: str) -> None:
        memory.inner.put_raw_metadata(namespace, key, raw_text)
