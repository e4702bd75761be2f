"""The cross-session reads and the rewrites of ``InMemoryMemory``.

The contract's ``WithCrossSession`` (a session's messages in a time range, the newest messages
across sessions) and ``WithRewrite`` (content replacement, deletes by timestamp) groups
(aalis_api_memory._backend), written for clarity rather than speed: each scans the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from aalis_api_memory import RangeQuery, RecentMessageRecord, RecentQuery, take_last
from aalis_schema_message import Message

from aalis_plugin_memory_inmemory._base import InMemoryBase, Limit, Row


class InMemoryQueries(InMemoryBase):
    """The cross-session and rewrite storage methods (a mixin of ``InMemoryMemory``)."""

    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        excluded = set(query.exclude_kinds or ())
        found: list[Message] = []
        for row in self._rows(session_id):
            if len(found) >= self.range_query_limit:
                break
            if not query.from_ts <= row.timestamp <= query.to_ts:
                continue
            if query.roles and row.message.role not in query.roles:
                continue
            if row.message.kind is not None and row.message.kind in excluded:
                continue
            found.append(self._out(row))
        return found

    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        roles = set(query.roles)
        kinds = None if query.kinds is None else set(query.kinds)
        excluded = set(query.exclude_kinds or ())
        skipped = set(query.exclude_session_ids or ())
        matches: list[tuple[Row, str]] = []
        for session_id, rows in self._sessions.items():
            if session_id in skipped:
                continue
            for row in rows:
                message = row.message
                if row.archived or message.role not in roles:
                    continue
                if kinds is not None and message.kind not in kinds:
                    continue
                if message.kind is not None and message.kind in excluded:
                    continue
                if query.since_ts is not None and row.timestamp < query.since_ts:
                    continue
                if query.platform is not None and (
                    message.metadata is None or message.metadata.get("platform") != query.platform
                ):
                    continue
                matches.append((row, session_id))
        matches.sort(key=lambda item: item[0].order)
        return [
            RecentMessageRecord(session_id, self._out(row))
            for row, session_id in matches[-query.limit :]
        ]

    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        changed = 0
        for row in take_last(self._rows(session_id), recent_limit):
            content = row.message.content
            if isinstance(content, str) and old in content:
                row.message = attrs.evolve(row.message, content=content.replace(old, new))
                changed += 1
        return changed

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        doomed = set(timestamps)
        return self._delete_rows(session_id, lambda row: row.timestamp in doomed)


__all__ = ["InMemoryQueries"]
