"""The fixture and hooks a backend provides to the conformance kit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from aalis_api_memory.testing._support import maybe_await


class ConformanceBase:
    """What every conformance mixin relies on; ``MemoryServiceConformance`` subclasses it.

    A backend's test class overrides:

    * ``memory`` (required): a ``pytest_asyncio.fixture`` yielding a fresh, empty store
      (and closing it afterwards). The store may expose ``range_query_limit`` and
      ``cross_session_max_limit`` attributes; the kit reads them (defaults 500 and 1000).
    * ``corrupt_metadata(memory, namespace, key, raw_text)`` (optional, sync or async):
      store ``raw_text`` as the entry's data *as is*, bypassing validation, so the kit can
      check how unreadable entries are handled. Without it those tests skip with a reason.
    """

    @pytest_asyncio.fixture
    async def memory(self) -> AsyncIterator[Any]:
        pytest.fail(
            f"{type(self).__name__} must override the `memory` fixture with a "
            "@pytest_asyncio.fixture that yields a fresh store"
        )
        yield None  # pragma: no cover

    def corrupt_metadata(self, memory: Any, namespace: str, key: str, raw_text: str) -> Any:
        """Write ``raw_text`` as the stored data of ``namespace``/``key``, unvalidated."""
        raise NotImplementedError

    async def write_raw_metadata(
        self, memory: Any, namespace: str, key: str, raw_text: str
    ) -> None:
        """Call the backend's ``corrupt_metadata`` hook, or skip when it has none."""
        if type(self).corrupt_metadata is ConformanceBase.corrupt_metadata:
            pytest.skip(
                "the backend's test class does not override corrupt_metadata(), so the kit "
                "cannot create an unreadable metadata entry"
            )
        await maybe_await(self.corrupt_metadata(memory, namespace, key, raw_text))


__all__ = ["ConformanceBase"]
