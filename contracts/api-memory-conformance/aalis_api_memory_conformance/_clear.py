"""Conformance: ``clear_session`` and ``clear_all`` remove messages, never metadata."""

from __future__ import annotations

from aalis_api_memory import FullMemoryService

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import INF, conformance, has, msg, texts


async def _session(
    memory: FullMemoryService, session_id: str, n: int = 4, archive: int = 2
) -> None:
    for i in range(n):
        await memory.save_message(session_id, msg(f"{session_id}{i}", ts=i))
    await memory.archive_span(session_id, archive)


@conformance
class ClearConformance(ConformanceBase):
    async def test_clear_session_removes_active_and_archived(
        self, memory: FullMemoryService
    ) -> None:
        await _session(memory, "s")
        await _session(memory, "other")
        await memory.save_metadata("ns", "s", {"kept": True})
        await memory.clear_session("s")
        assert await memory.get_history("s", INF) == []
        if has(memory, "get_full_history"):
            assert await memory.get_full_history("s", INF) == []
            assert len(await memory.get_full_history("other", INF)) == 4
        if has(memory, "count_history"):
            assert await memory.count_history("s") == 0
        if has(memory, "export_session"):
            assert await memory.export_session("s") == []
        assert texts(await memory.get_history("other", INF)) == ["other2", "other3"]
        assert await memory.get_metadata("ns", "s") == {"kept": True}

    async def test_clear_session_of_unknown_session_is_fine(
        self, memory: FullMemoryService
    ) -> None:
        await memory.clear_session("nobody")
        assert await memory.get_history("nobody") == []

    async def test_a_cleared_session_starts_afresh(self, memory: FullMemoryService) -> None:
        await _session(memory, "s")
        await memory.clear_session("s")
        await memory.save_message("s", msg("again", ts=0))
        assert texts(await memory.get_history("s", INF)) == ["again"]
        if has(memory, "get_full_history"):
            assert texts(await memory.get_full_history("s", INF)) == ["again"]
        assert await memory.archive_span("s", INF) == 1

    async def test_clear_all_removes_every_session_but_not_metadata(
        self, memory: FullMemoryService
    ) -> None:
        self.require(memory, "clear_all")
        for session_id in ("a", "b", "c"):
            await _session(memory, session_id)
        await memory.save_metadata("ns", "k", {"v": 1})
        await memory.clear_all()
        for session_id in ("a", "b", "c"):
            assert await memory.get_history(session_id, INF) == []
            if has(memory, "get_full_history"):
                assert await memory.get_full_history(session_id, INF) == []
        if has(memory, "list_sessions"):
            assert await memory.list_sessions() == []
        assert await memory.get_metadata("ns", "k") == {"v": 1}
        await memory.save_message("a", msg("after", ts=9))
        assert texts(await memory.get_history("a")) == ["after"]

    async def test_clear_all_on_an_empty_store_is_fine(self, memory: FullMemoryService) -> None:
        self.require(memory, "clear_all")
        await memory.clear_all()
        assert await memory.get_history("s") == []


__all__ = ["ClearConformance"]
