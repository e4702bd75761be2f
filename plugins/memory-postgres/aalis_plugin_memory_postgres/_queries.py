"""The cross-session reads and the rewrites of ``PostgresMemory``.

The contract's ``WithCrossSession`` (a session's messages in a time range, the newest messages
across sessions) and ``WithRewrite`` (content replacement, deletes by timestamp) groups
(aalis_api_memory._backend). Filters are built from fixed SQL fragments; every caller value is a
bound parameter, never SQL text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from aalis_api_memory import RangeQuery, RecentMessageRecord, RecentQuery
from aalis_schema_message import Message

from aalis_plugin_memory_postgres._base import Limit, PostgresBase
from aalis_plugin_memory_postgres._codec import (
    decode_messages,
    decode_messages_indexed,
    encode_message,
    escape,
    unescape,
)


def _escaped(values: Iterable[str]) -> list[str]:
    return [escape(value) for value in dict.fromkeys(values)]


class PostgresQueries(PostgresBase):
    """The cross-session and rewrite storage methods (a mixin of ``PostgresMemory``)."""

    async def _get_messages_by_session_range(
        self, session_id: str, query: RangeQuery
    ) -> list[Message]:
        filters = []
        params: dict[str, Any] = {
            "sid": escape(session_id),
            "start": query.from_ts,
            "end": query.to_ts,
            "limit": self.config.range_query_limit,
        }
        if query.roles:
            filters.append("AND role = ANY(%(roles)s)")
            params["roles"] = _escaped(query.roles)
        if query.exclude_kinds:
            filters.append("AND (kind IS NULL OR kind <> ALL(%(kinds)s))")
            params["kinds"] = _escaped(query.exclude_kinds)
        part = self._sql.range_part
        text = " ".join(filters)
        active = part.format(archived="NOT archived", filters=text)
        archived = part.format(archived="archived", filters=text)
        sql = (
            f"SELECT data FROM (({active}) UNION ALL ({archived})) AS r"
            " ORDER BY ts, seq LIMIT %(limit)s"
        )
        rows = await self._fetch(sql, params)
        return decode_messages([row[0] for row in rows], self._corrupt(session_id))

    async def _get_recent_messages_across_sessions(
        self, query: RecentQuery
    ) -> list[RecentMessageRecord]:
        filters: list[str] = []
        params: dict[str, Any] = {"roles": _escaped(query.roles), "limit": query.limit}
        if query.kinds is not None:
            filters.append("AND kind = ANY(%(kinds)s)")
            params["kinds"] = _escaped(query.kinds)
        if query.exclude_kinds:
            filters.append("AND (kind IS NULL OR kind <> ALL(%(exclude_kinds)s))")
            params["exclude_kinds"] = _escaped(query.exclude_kinds)
        if query.since_ts is not None:
            filters.append("AND ts >= %(since)s")
            params["since"] = query.since_ts
        if query.platform is not None:
            filters.append("AND platform = %(platform)s")
            params["platform"] = escape(query.platform)
        if query.exclude_session_ids:
            filters.append("AND session_id <> ALL(%(skip)s)")
            params["skip"] = _escaped(query.exclude_session_ids)
        rows = await self._fetch(self._sql.recent.format(filters=" ".join(filters)), params)
        rows.reverse()
        decoded = decode_messages_indexed([row[1] for row in rows], self._corrupt("*"))
        return [RecentMessageRecord(unescape(rows[i][0]), message) for i, message in decoded]

    async def _update_message_content(
        self, session_id: str, old: str, new: str, recent_limit: Limit
    ) -> int:
        sid = escape(session_id)
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(self._sql.lock_session, (sid,))
            rows = await self._newest(conn, sid, recent_limit)
            decoded = decode_messages_indexed([row[2] for row in rows], self._corrupt(session_id))
            updates: list[tuple[str, int]] = []
            for index, message in decoded:
                content = message.content
                if isinstance(content, str) and old in content:
                    seq, ts, _data = rows[index]
                    changed = Message.from_json(
                        {**message.to_json(), "content": content.replace(old, new)}
                    )
                    updates.append((encode_message(changed, ts), seq))
            if updates:
                async with conn.cursor() as cursor:
                    await cursor.executemany(self._sql.update_data, updates)
        return len(updates)

    async def _delete_messages_by_timestamps(
        self, session_id: str, timestamps: Sequence[int]
    ) -> int:
        return await self._delete_where(self._sql.delete_by_ts, session_id, list(timestamps))


__all__ = ["PostgresQueries"]
