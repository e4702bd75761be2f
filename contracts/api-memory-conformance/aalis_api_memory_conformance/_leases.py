"""Conformance: leases (``acquire_lease`` + ``release_lease``).

The rules are in ``aalis_api_memory._leases`` and docs/reference/memory-contract.md ("Leases").
Every case runs on one store object; two holders stand for two processes (each process uses
its own holder id), and the concurrent case fires the attempts at once so a backend that
reads, then writes in two steps lets two of them win.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aalis_api_memory import FullMemoryService

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import conformance, has

LONG = 60_000

BAD_ARGUMENTS = [
    (("", "h", LONG), ValueError),
    (("n", "", LONG), ValueError),
    ((None, "h", LONG), TypeError),
    (("n", 7, LONG), TypeError),
    (("n", "h", 0), ValueError),
    (("n", "h", -5), ValueError),
    (("n", "h", 8 * 24 * 3600 * 1000), ValueError),  # more than a week
    (("n", "h", True), TypeError),
    (("n", "h", 1.5), TypeError),
    (("n", "h", "100"), TypeError),
]


@conformance
class LeasesConformance(ConformanceBase):
    def need(self, memory: Any) -> None:
        self.require(memory, "acquire_lease", "release_lease")

    async def test_one_holder_at_a_time_and_the_holder_renews(
        self, memory: FullMemoryService
    ) -> None:
        self.need(memory)
        assert await memory.acquire_lease("turn:s", "A", LONG) is True
        assert await memory.acquire_lease("turn:s", "B", LONG) is False
        assert await memory.acquire_lease("turn:s", "A", LONG) is True  # renewal
        assert await memory.acquire_lease("turn:s", "B", LONG) is False
        # another name is another lease
        assert await memory.acquire_lease("turn:t", "B", LONG) is True
        assert await memory.acquire_lease("turn:t", "A", LONG) is False

    async def test_release_frees_it_for_the_next_holder_only_when_held(
        self, memory: FullMemoryService
    ) -> None:
        self.need(memory)
        assert await memory.release_lease("turn:s", "A") is False  # nobody holds it
        assert await memory.acquire_lease("turn:s", "A", LONG) is True
        assert await memory.release_lease("turn:s", "B") is False  # not B's to release
        assert await memory.acquire_lease("turn:s", "B", LONG) is False
        assert await memory.release_lease("turn:s", "A") is True
        assert await memory.release_lease("turn:s", "A") is False
        assert await memory.acquire_lease("turn:s", "B", LONG) is True

    async def test_an_expired_lease_is_taken_over_and_cannot_be_released_by_its_old_holder(
        self, memory: FullMemoryService
    ) -> None:
        self.need(memory)
        assert await memory.acquire_lease("turn:s", "A", 150) is True
        assert await memory.acquire_lease("turn:s", "B", LONG) is False
        await asyncio.sleep(0.4)
        assert await memory.acquire_lease("turn:s", "B", LONG) is True
        assert await memory.release_lease("turn:s", "A") is False
        assert await memory.acquire_lease("turn:s", "A", LONG) is False

    async def test_renewal_moves_the_expiry(self, memory: FullMemoryService) -> None:
        self.need(memory)
        assert await memory.acquire_lease("turn:s", "A", 600) is True
        await asyncio.sleep(0.3)
        assert await memory.acquire_lease("turn:s", "A", 600) is True
        await asyncio.sleep(0.45)  # past the first expiry, before the renewed one
        assert await memory.acquire_lease("turn:s", "B", LONG) is False

    async def test_of_many_attempts_at_once_exactly_one_wins(
        self, memory: FullMemoryService
    ) -> None:
        self.need(memory)
        results = await asyncio.gather(
            *(memory.acquire_lease("turn:race", f"holder-{i}", LONG) for i in range(16))
        )
        assert results.count(True) == 1
        winner = f"holder-{results.index(True)}"
        assert await memory.acquire_lease("turn:race", winner, LONG) is True
        assert await memory.acquire_lease("turn:race", "someone-else", LONG) is False

    @pytest.mark.parametrize(("arguments", "error"), BAD_ARGUMENTS)
    async def test_bad_arguments_are_refused_and_change_nothing(
        self, memory: FullMemoryService, arguments: tuple[Any, ...], error: type[Exception]
    ) -> None:
        self.need(memory)
        with pytest.raises(error):
            await memory.acquire_lease(*arguments)
        name, holder = arguments[0], arguments[1]
        with pytest.raises((TypeError, ValueError)):
            await memory.release_lease(name if name != "n" else "", holder)
        # nothing was taken: a fresh holder gets the lease
        if isinstance(name, str) and name:
            assert await memory.acquire_lease(name, "fresh", LONG) is True

    async def test_leases_are_neither_messages_nor_metadata(
        self, memory: FullMemoryService
    ) -> None:
        self.need(memory)
        assert await memory.acquire_lease("turn:s", "A", LONG) is True
        assert await memory.get_history("s") == []
        assert await memory.get_history("turn:s") == []
        if has(memory, "list_namespaces"):
            assert await memory.list_namespaces() == []
        if has(memory, "list_sessions"):
            assert await memory.list_sessions() == []
        if has(memory, "clear_all"):
            await memory.clear_all()
        # a clear of every history leaves a running turn's lease alone
        assert await memory.acquire_lease("turn:s", "B", LONG) is False
