"""Conformance: random operation sequences agree with a naive reference model.

The focused tests pin each rule on a hand-made layout; this one lets seeded random sequences
(ties, out-of-order timestamps, markers, repeated partial archiving, deletes, rewrites) find
the combinations nobody thought of. Seeds are fixed, so a failure is reproducible.
"""

from __future__ import annotations

import random

import pytest
from aalis_api_memory import FullMemoryService

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import (
    INF,
    T0,
    HistoryModel,
    conformance,
    has,
    marker,
    msg,
)

SESSIONS = ("s1", "s2")


@conformance
class ModelConformance(ConformanceBase):
    @pytest.mark.parametrize("seed", range(6))
    async def test_random_operations_match_the_reference_model(
        self, memory: FullMemoryService, seed: int
    ) -> None:
        rng = random.Random(seed)
        model = HistoryModel()
        counter = 0
        for step in range(120):
            sid = rng.choice(SESSIONS)
            action = rng.random()
            if action < 0.5:
                counter += 1
                ts = rng.randrange(0, 40)
                message = (
                    marker(f"M{counter}", ts=ts)
                    if rng.random() < 0.25
                    else msg(
                        f"m{counter} word{counter % 3}",
                        role=rng.choice(["user", "assistant"]),
                        ts=ts,
                    )
                )
                await memory.save_message(sid, message)
                model.save(sid, message)
            elif action < 0.65:
                count: float = rng.choice([0, 1, 2, 3, 5, 8, 100, INF])
                keep = [rng.randrange(0, 6) for _ in range(rng.randrange(0, 3))]
                got = await memory.archive_span(sid, count, keep=keep)
                assert got == model.archive(sid, count, keep), (
                    f"seed {seed} step {step}: archive_span"
                )
            elif action < 0.72 and has(memory, "delete_messages_by_timestamps"):
                stamps = [T0 + rng.randrange(0, 40) for _ in range(rng.randrange(1, 3))]
                got = await memory.delete_messages_by_timestamps(sid, stamps)
                assert got == model.delete(sid, stamps), f"seed {seed} step {step}: delete"
            elif action < 0.78 and has(memory, "update_message_content"):
                word = f"word{rng.randrange(0, 3)}"
                recent: float = rng.choice([1, 3, 10, INF])
                got = await memory.update_message_content(sid, word, "WORD", recent_limit=recent)
                assert got == model.replace(sid, word, "WORD", recent), (
                    f"seed {seed} step {step}: update"
                )
            limit: float = rng.choice([0, 1, 2, 3, 4, 7, 20, INF])
            assert await memory.get_history(sid, limit) == model.history(sid, limit), (
                f"seed {seed} step {step}: get_history({sid!r}, {limit})"
            )
            if has(memory, "get_full_history"):
                assert await memory.get_full_history(sid, limit) == model.full(sid, limit), (
                    f"seed {seed} step {step}: get_full_history({sid!r}, {limit})"
                )
            if has(memory, "count_history"):
                assert await memory.count_history(sid) == model.count(sid)


__all__ = ["ModelConformance"]
