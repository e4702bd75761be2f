"""Automatic compression acts on the history its usage figures describe, not on what is left.

Several writers on one session (three ``aalis chat`` processes): process B reports
``token_usage`` with the 52 messages its prompt saw, but by the time B's compression reads the
history, process A has already compressed it down to a few messages. B used to compress those
2-4 messages anyway (8 automatic compressions in 90 turns, 6 of them on 2-4 messages). The
figures describe a history that no longer exists, so B's automatic compression now does
nothing. Two hosts on one SQLite file stand for the two processes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from aalis_api_memory import CompressionUsage
from aalis_plugin_memory_summary._handlers import on_token_usage
from aalis_schema_message import Message

SID = "shared"
SUMMARY = json.dumps({"summary": "The user asked 26 numbered questions about topics.", "keep": []})


@pytest.mark.parametrize("backend_name", ["memory-sqlite"])
async def test_usage_measured_before_another_process_compressed_starts_nothing(
    make_env: Any,
) -> None:
    async with make_env() as first, make_env() as second:
        for i in range(26):
            await first.save(
                SID,
                Message(role="user", content=f"question {i}", timestamp=1000 + 2 * i),
                Message(role="assistant", content=f"answer {i}", timestamp=1001 + 2 * i),
            )
        # What the second process's prompt saw: 52 messages, the count line (50) crossed.
        seen = CompressionUsage(
            used=400,
            context_window=8192,
            token_budget=7168,
            compressible=350,
            history_messages=52,
        )
        # Meanwhile the first process compresses, and the conversation goes on.
        first.model.replies.append(SUMMARY)
        await first.service.compress(SID)
        await first.save(
            SID,
            Message(role="user", content="question 26", timestamp=2000),
            Message(role="assistant", content="answer 26", timestamp=2001),
        )
        record = await first.service.summary(SID)
        active = await first.memory.get_history(SID, math.inf)

        task = await on_token_usage(second.plugin.service, SID, "cli", seen)
        if task is not None:
            await task
        assert second.model.calls == []
        assert await second.service.summary(SID) == record
        assert await second.memory.get_history(SID, math.inf) == active
