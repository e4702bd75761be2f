from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from aalis_api_vectorstore_conformance import VectorStoreConformance
from aalis_plugin_vectorstore_sqlite import SqliteVectorStore


class TestSqliteVectorStoreConformance(VectorStoreConformance):
    @pytest_asyncio.fixture
    async def vectorstore(self, tmp_path: Path) -> AsyncIterator[SqliteVectorStore]:
        store = await SqliteVectorStore(tmp_path / "vectors.db").open()
        yield store
        await store.close()
