"""Conformance: concurrent use from one event loop never loses or half-applies a write."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from aalis_api_memory import Delete, FullMemoryService, Put

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import INF, conformance, has, msg

KEYS = 100


@conformance
class ConcurrencyConformance(ConformanceBase):
    async def test_readers_see_a_commit_all_or_nothing(self, memory: FullMemoryService) -> None:
        await memory.commit_metadata([Put("ns", f"k{i:03}", {"v": 0}) for i in range(KEYS)])
        seen: list[frozenset[Any]] = []
        done = asyncio.Event()

        async def reader() -> None:
            while not done.is_set():
                entries = await memory.list_metadata("ns")
                seen.append(frozenset((len(entries), e.data["v"]) for e in entries))
                await asyncio.sleep(0)

        async def writer() -> None:
            try:
                for version in range(1, 6):
                    await memory.commit_metadata(
                        [Put("ns", f"k{i:03}", {"v": version}) for i in range(KEYS)]
                    )
                    await asyncio.sleep(0)
                # Half deleted, half rewritten, in one batch.
                await memory.commit_metadata(
                    [Delete("ns", f"k{i:03}") for i in range(0, KEYS, 2)]
                    + [Put("ns", f"k{i:03}", {"v": 99}) for i in range(1, KEYS, 2)]
                )
            finally:
                done.set()

        await asyncio.gather(writer(), reader(), reader(), reader())
        assert seen, "the readers never ran"
        allowed = {frozenset({(KEYS, version)}) for version in range(6)}
        allowed.add(frozenset({(KEYS // 2, 99)}))
        assert set(seen) <= allowed, f"a reader saw a half-applied batch: {set(seen) - allowed}"
        final = await memory.list_metadata("ns")
        assert len(final) == KEYS // 2
        assert all(e.data == {"v": 99} for e in final)

    async def test_a_reader_of_one_key_sees_old_or_new(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("ns", "k", {"v": 0, "pad": "x" * 1000})
        values: list[Any] = []
        done = asyncio.Event()

        async def reader() -> None:
            while not done.is_set():
                values.append(await memory.get_metadata("ns", "k"))
                await asyncio.sleep(0)

        async def writer() -> None:
            try:
                for version in range(1, 20):
                    await memory.save_metadata("ns", "k", {"v": version, "pad": "y" * version})
            finally:
                done.set()

        await asyncio.gather(writer(), reader())
        for value in values:
            assert value is not None
            assert value["pad"] == ("x" * 1000 if value["v"] == 0 else "y" * value["v"])

    async def test_200_concurrent_saves_to_one_session_are_all_present(
        self, memory: FullMemoryService
    ) -> None:
        await asyncio.gather(
            *(memory.save_message("s", msg(f"m{i}", ts=i % 13)) for i in range(100))
        )
        await asyncio.gather(*(memory.save_message("s", msg(f"n{i}")) for i in range(100)))
        every = await memory.get_history("s", INF)
        assert sorted(m.content or "" for m in every) == sorted(
            [f"m{i}" for i in range(100)] + [f"n{i}" for i in range(100)]
        )
        stamps = [m.timestamp or 0 for m in every]
        assert stamps == sorted(stamps)
        if has(memory, "count_history"):
            assert await memory.count_history("s") == 200

    async def test_concurrent_saves_across_sessions(self, memory: FullMemoryService) -> None:
        await asyncio.gather(
            *(memory.save_message(f"s{i % 10}", msg(f"m{i}", ts=i)) for i in range(200))
        )
        for session in range(10):
            history = await memory.get_history(f"s{session}", INF)
            assert [m.content for m in history] == [f"m{i}" for i in range(session, 200, 10)]

    async def test_saves_during_archiving_are_not_lost(self, memory: FullMemoryService) -> None:
        for i in range(50):
            await memory.save_message("s", msg(f"old{i}", ts=i))

        async def archive() -> int:
            total = 0
            for _ in range(10):
                total += await memory.archive_span("s", 5)
                await asyncio.sleep(0)
            return total

        results = await asyncio.gather(
            archive(), *(memory.save_message("s", msg(f"new{i}", ts=1000 + i)) for i in range(50))
        )
        archived = cast(int, results[0])
        active = await memory.get_history("s", INF)
        assert archived + len(active) == 100
        if has(memory, "get_full_history"):
            assert len(await memory.get_full_history("s", INF)) == 100

    async def test_concurrent_metadata_writes_to_distinct_keys(
        self, memory: FullMemoryService
    ) -> None:
        await asyncio.gather(
            *(memory.save_metadata("ns", f"k{i:03}", {"i": i}) for i in range(100)),
            *(memory.commit_metadata([Put("ns", f"c{i:03}", {"i": i})]) for i in range(100)),
        )
        entries = await memory.list_metadata("ns")
        assert len(entries) == 200


__all__ = ["ConcurrencyConformance"]
