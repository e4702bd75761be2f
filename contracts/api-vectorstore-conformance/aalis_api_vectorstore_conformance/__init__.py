"""The conformance kit: one pytest suite every ``VectorStore`` must pass, with no skip.

Subclass ``VectorStoreConformance`` in your backend's tests and override the ``vectorstore``
fixture with an async fixture that yields a fresh, empty store (and closes it afterwards)::

    import pytest_asyncio
    from aalis_api_vectorstore_conformance import VectorStoreConformance

    class TestMyStore(VectorStoreConformance):
        @pytest_asyncio.fixture
        async def vectorstore(self):
            store = await MyStore.open(...)
            yield store
            await store.close()

A store whose search is approximate (an HNSW index) sets ``exact = False``: the exactness
test then asks for a recall of at least ``min_recall`` against brute force instead of the
exact top-k. Every other rule — scope filters inside the query, ``k`` hits in scope on
skewed data, model separation, dimension checks, deletes — holds for every store alike.
The optional ``lexical_search`` (``LexicalSearch``) is checked by ``LexicalSearchConformance``,
included here: its tests skip, naming the method, when the store has none; so do the
cases of the optional ``lexical_check`` / ``lexical_repair`` (``LexicalIndexCheckConformance``),
whose damage cases also need the store's kit subclass to override ``damage_lexical``.
Install with ``pip install aalis-api-vectorstore-conformance``.
"""

import pytest

pytest.register_assert_rewrite(
    "aalis_api_vectorstore_conformance._support",
    "aalis_api_vectorstore_conformance._suite",
    "aalis_api_vectorstore_conformance._lexical",
    "aalis_api_vectorstore_conformance._lexical_check",
)

from aalis_api_vectorstore_conformance._lexical import LexicalSearchConformance  # noqa: E402
from aalis_api_vectorstore_conformance._lexical_check import (  # noqa: E402
    LexicalIndexCheckConformance,
)
from aalis_api_vectorstore_conformance._suite import VectorStoreConformance  # noqa: E402
from aalis_api_vectorstore_conformance._support import (  # noqa: E402
    T0,
    brute_force,
    cosine,
    rec,
    scope,
    seeded_vector,
)

__all__ = [
    "T0",
    "LexicalIndexCheckConformance",
    "LexicalSearchConformance",
    "VectorStoreConformance",
    "brute_force",
    "cosine",
    "rec",
    "scope",
    "seeded_vector",
]
