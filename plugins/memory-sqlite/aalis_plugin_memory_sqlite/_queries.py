"""The cross-session reads and the rewrites of ``SqliteMemory``.

The contract's ``WithCrossSession`` (a session's messages in a time range, the newest messages
across sessions) and ``WithRewrite`` (content replacement, deletes by timestamp) groups
(aalis_api_memory._backend). A rewrite reads and decodes with no lock and takes the write lock
only to apply the changed rows (``bulk_writes.py``).
Each method encodes on the caller's side and hands the work to a thread: writes to the
worker that owns the connection (``_submit``), reads to the reader connection (``_read``), so a
read never queues behind a write waiting for another process's lock (``base.py``). The SQL of
the job is the synchronous ``Engine`` (``engine.py``), run on those threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aalis_api_memory import RangeQuery, RecentMessageRecord, RecentQuery
from aalis_schema_message import Message

from aalis_plugin_memory_sqlite._base import SqliteBase
from aalis_plugin_memory_sqlite._bulk_writes import rewrite_plan
from aalis_plugin_memory_sqlite._engine import Engine, Limit


class SqliteQueries(SqliteBase):
    """The cross-session and rewrite storage methods (a mixin of ``SqliteMemory``)."""

    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        return await self._read(
            Engine.get_messages_by_session_range,
            session_id,
            query.from_ts,
            query.to_ts,
            query.roles,
            query.exclude_kinds,
        )

    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        pairs = await self._read(
            Engine.get_recent_messages_across_sessions,
            query.limit,
            query.roles,
            query.kinds,
            query.exclude_kinds,
            query.since_ts,
            query.platform,
            query.exclude_session_ids,
        )
        return [RecentMessageRecord(session_id, message) for session_id, message in pairs]

    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        # Read and decode with no lock, encode off every store thread, and take the write
        # lock only to apply the changed rows (bulk_writes.py).
        rows = await self._read(Engine.rewrite_candidates, session_id, recent_limit)
        engine = self.engine
        updates = await asyncio.to_thread(
            rewrite_plan, rows, old, new, engine.corrupt_reporter(session_id)
        )
        if not updates:
            return 0
        return await self._submit(Engine.apply_rewrites, session_id, updates, old, new)

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        return await self._submit(Engine.delete_messages_by_timestamps, session_id, timestamps)


__all__ = ["SqliteQueries"]
