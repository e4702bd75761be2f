from collections.abc import AsyncIterator

import pytest_asyncio
from aalis_api_vectorstore import InMemoryVectorStore
from aalis_api_vectorstore_conformance import VectorStoreConformance


class TestInMemoryVectorStore(VectorStoreConformance):
    @pytest_asyncio.fixture
    async def vectorstore(self) -> AsyncIterator[InMemoryVectorStore]:
        yield InMemoryVectorStore()
