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

    async def damage_lexical(self, store: SqliteVectorStore, message_id: str, how: str) -> None:
        # Behind the store's back, through another connection to the same file.
        import sqlite3

        conn = sqlite3.connect(store.path)
        try:
            (row_id,) = conn.execute(
                "SELECT id FROM vectors WHERE message_id = ?", (message_id,)
            ).fetchone()
            if how == "missing":
                conn.execute("DELETE FROM vectors_lex WHERE rowid = ?", (row_id,))
            else:
                conn.execute(
                    "UPDATE vectors_lex SET words = 'other words', idents = '' WHERE rowid = ?",
                    (row_id,),
                )
            conn.commit()
        finally:
            conn.close()
