"""The conformance kit: one pytest suite every ``Embedder`` must pass.

Subclass ``EmbedderConformance`` in your provider's tests and override the ``embedder``
fixture with an async fixture that yields a ready embedder (and closes it afterwards)::

    import pytest_asyncio
    from aalis_api_embedding_conformance import EmbedderConformance

    class TestMyEmbedder(EmbedderConformance):
        @pytest_asyncio.fixture
        async def embedder(self):
            model = MyEmbedder(...)
            yield model
            await model.close()

Every test is marked ``pytest.mark.asyncio``, so the kit runs under pytest-asyncio's strict
mode as well as ``asyncio_mode = "auto"``. Install with ``pip install
aalis-api-embedding-conformance``.
"""

import pytest

pytest.register_assert_rewrite("aalis_api_embedding_conformance._suite")

from aalis_api_embedding_conformance._suite import EmbedderConformance, cosine  # noqa: E402

__all__ = ["EmbedderConformance", "cosine"]
