from collections.abc import AsyncIterator

import pytest_asyncio
from aalis_api_vectorstore import InMemoryVectorStore
from aalis_api_vectorstore_conformance import VectorStoreConformance


class TestInMemoryVectorStore(VectorStoreConformance):
    @pytest_asyncio.fixture
    async def vectorstore(self) -> AsyncIterator[InMemoryVectorStore]:
        yield InMemoryVectorStore()

    async def damage_lexical(self, store: InMemoryVectorStore, message_id: str, how: str) -> None:
        import attrs
        from aalis_api_vectorstore import LexicalTerms, lexical_terms

        stored = store._rows[message_id]
        terms = LexicalTerms((), ()) if how == "missing" else lexical_terms("something else")
        store._rows[message_id] = attrs.evolve(stored, terms=terms)
