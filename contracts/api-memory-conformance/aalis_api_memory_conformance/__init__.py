"""The conformance kit: one pytest suite every ``MemoryService`` backend must pass.

Subclass ``MemoryServiceConformance`` in your backend's tests and override the ``memory``
fixture with an async fixture that yields a fresh, empty store::

    import pytest_asyncio
    from aalis_api_memory import FullHistory, Transfer
    from aalis_api_memory_conformance import MemoryServiceConformance

    class TestMyBackend(MemoryServiceConformance):
        # the optional groups the backend implements ("all" for every one of them)
        implements = {FullHistory, Transfer}

        @pytest_asyncio.fixture
        async def memory(self):
            store = MyBackend(...)
            yield store
            await store.close()

        # optional: lets the kit check how unreadable metadata entries are handled
        def corrupt_metadata(self, memory, namespace, key, raw_text):
            memory.write_raw_row(namespace, key, raw_text)

Every test is marked ``pytest.mark.asyncio``, so the kit runs under pytest-asyncio's strict
mode as well as ``asyncio_mode = "auto"``. Optional methods come in groups (the Protocols
``FullHistory``, ``ClearAll``, ``CrossSession``, ``Rewrite``, ``MetadataKeys``, ``Transfer`` and
``ExactArchiving``, ``MessagesById``, ``Leases`` of ``aalis_api_memory``). A group the class declares in ``implements`` is a
promise: a test that needs one of its methods FAILS, naming it, when the store lacks it (and
``test_declared_optional_groups_are_implemented`` lists every such method). A method of an
undeclared group is detected on the store; its tests skip with a reason when absent. The
store may expose ``range_query_limit`` / ``cross_session_max_limit`` attributes (defaults
500 / 1000), which the kit reads. Install with ``pip install aalis-api-memory-conformance``.

The mixins are public too, for a backend that wants to run one area on its own.
"""

import pytest

# The kit's asserts live outside test files; have pytest rewrite them for useful failures.
pytest.register_assert_rewrite(
    "aalis_api_memory_conformance._support",
    "aalis_api_memory_conformance._archive",
    "aalis_api_memory_conformance._bad_input",
    "aalis_api_memory_conformance._clear",
    "aalis_api_memory_conformance._concurrency",
    "aalis_api_memory_conformance._exact",
    "aalis_api_memory_conformance._extensions",
    "aalis_api_memory_conformance._history",
    "aalis_api_memory_conformance._hostile",
    "aalis_api_memory_conformance._identity",
    "aalis_api_memory_conformance._leases",
    "aalis_api_memory_conformance._metadata",
    "aalis_api_memory_conformance._model",
    "aalis_api_memory_conformance._queries",
    "aalis_api_memory_conformance._rewrite",
)

from aalis_api_memory_conformance._archive import ArchiveConformance  # noqa: E402
from aalis_api_memory_conformance._bad_input import BadInputConformance  # noqa: E402
from aalis_api_memory_conformance._base import ConformanceBase  # noqa: E402
from aalis_api_memory_conformance._clear import ClearConformance  # noqa: E402
from aalis_api_memory_conformance._concurrency import ConcurrencyConformance  # noqa: E402
from aalis_api_memory_conformance._exact import ExactArchiveConformance  # noqa: E402
from aalis_api_memory_conformance._extensions import ExtensionsConformance  # noqa: E402
from aalis_api_memory_conformance._history import HistoryConformance  # noqa: E402
from aalis_api_memory_conformance._hostile import HostileInputConformance  # noqa: E402
from aalis_api_memory_conformance._identity import MessageIdentityConformance  # noqa: E402
from aalis_api_memory_conformance._leases import LeasesConformance  # noqa: E402
from aalis_api_memory_conformance._metadata import MetadataConformance  # noqa: E402
from aalis_api_memory_conformance._model import ModelConformance  # noqa: E402
from aalis_api_memory_conformance._queries import (  # noqa: E402
    CrossSessionConformance,
    RangeQueryConformance,
)
from aalis_api_memory_conformance._rewrite import (  # noqa: E402
    DeleteByTimestampConformance,
    UpdateContentConformance,
)


class MemoryServiceConformance(
    HistoryConformance,
    ArchiveConformance,
    ClearConformance,
    RangeQueryConformance,
    CrossSessionConformance,
    UpdateContentConformance,
    DeleteByTimestampConformance,
    MetadataConformance,
    ConcurrencyConformance,
    BadInputConformance,
    HostileInputConformance,
    ExtensionsConformance,
    ExactArchiveConformance,
    MessageIdentityConformance,
    LeasesConformance,
    ModelConformance,
):
    """Every rule of the memory contract and its extensions; subclass it, override ``memory``.

    The rules: docs/reference/memory-contract.md.
    """


__all__ = [
    "ArchiveConformance",
    "BadInputConformance",
    "ClearConformance",
    "ConcurrencyConformance",
    "ConformanceBase",
    "CrossSessionConformance",
    "DeleteByTimestampConformance",
    "ExactArchiveConformance",
    "ExtensionsConformance",
    "HistoryConformance",
    "HostileInputConformance",
    "LeasesConformance",
    "MemoryServiceConformance",
    "MessageIdentityConformance",
    "MetadataConformance",
    "ModelConformance",
    "RangeQueryConformance",
    "UpdateContentConformance",
]
