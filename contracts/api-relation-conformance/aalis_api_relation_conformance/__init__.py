"""The conformance kit: one pytest suite every ``RelationService`` provider must pass.

Subclass ``RelationConformance`` and override the ``harness`` fixture with an async fixture
yielding a ``Harness``: the service under test, and a way to make it learn a statement the
way it really does (the in-memory reference takes the statement; the plugin saves the
sentence ``sentence(attribute, value)`` as a user message and waits for its extractor)::

    class TestMine(RelationConformance):
        @pytest_asyncio.fixture
        async def harness(self):
            yield MyHarness(...)

Install with ``pip install aalis-api-relation-conformance``.
"""

import pytest

pytest.register_assert_rewrite("aalis_api_relation_conformance._suite")

from aalis_api_relation_conformance._suite import (  # noqa: E402
    ALICE,
    BOB,
    Harness,
    RelationConformance,
    sentence,
)

__all__ = ["ALICE", "BOB", "Harness", "RelationConformance", "sentence"]
