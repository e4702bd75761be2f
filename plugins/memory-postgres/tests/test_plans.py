"""The reads stay flat as tables grow: proven on the plans, not with a stopwatch.

Each query the store runs is EXPLAINed with ``ANALYZE, BUFFERS`` on a session (and a table)
first of 2,000 and then of 20,000 messages, 90 % of them archived, beside other sessions. A
query whose cost grows with history would touch about ten times the pages the second time; a
flat one touches the same pages, plus at most one more level of each b-tree it descends. The
plan must also contain no sequential scan and no sort of a whole session.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aalis_plugin_memory_postgres import PostgresMemory
from aalis_plugin_memory_postgres._schema import quote_schema

SESSION = "big"
# Each b-tree descended may gain a level between the sizes, and the heap pages of the
# returned rows may straddle one more page boundary.
SLACK_BLOCKS = 8


async def _grow(store: PostgresMemory, total: int) -> None:
    """SESSION and 3 others of ``total`` messages (first 90 % archived), and small sessions."""
    s = quote_schema(store.schema)
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute(f"TRUNCATE {s}.messages, {s}.session_stats")
        for sid in (SESSION, "other-1", "other-2", "other-3"):
            await conn.execute(
                f"INSERT INTO {s}.messages (session_id, ts, archived, control, kind, role, platform,"
                " data, id)"
                " SELECT %(sid)s, i, i < %(archived)s, i %% 10 = 5,"
                " CASE WHEN i %% 10 = 5 THEN 'compression' END,"
                " CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
                " CASE WHEN i %% 3 = 0 THEN 'web' END,"
                " json_strip_nulls(json_build_object("
                "   'role', CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
                "   'kind', CASE WHEN i %% 10 = 5 THEN 'compression' END,"
                "   'content', 'message ' || i, 'timestamp', i, 'id', %(sid)s || '-' || i))::text,"
                " %(sid)s || '-' || i"
                " FROM generate_series(1, %(total)s) AS i",
                {"sid": sid, "total": total, "archived": total * 9 // 10},
            )
            await conn.execute(
                f"INSERT INTO {s}.session_stats SELECT session_id,"
                " count(*) FILTER (WHERE NOT archived),"
                " count(*) FILTER (WHERE NOT archived AND NOT control),"
                " count(*) FILTER (WHERE archived), max(ts)"
                f" FROM {s}.messages WHERE session_id = %s GROUP BY session_id",
                (sid,),
            )
        # Many small sessions, as a shared server holds: count_history must find its row by key.
        await conn.execute(
            f"INSERT INTO {s}.messages (session_id, ts, control, role, data, id)"
            " SELECT 'tiny-' || i, i, false, 'user',"
            " json_build_object('role', 'user', 'content', 'hi', 'timestamp', i, 'id', 'tiny-' || i)"
            "::text, 'tiny-' || i"
            " FROM generate_series(1, %s) AS i",
            (total // 2,),
        )
        await conn.execute(
            f"INSERT INTO {s}.session_stats SELECT 'tiny-' || i, 1, 1, 0, i"
            " FROM generate_series(1, %s) AS i",
            (total // 2,),
        )
    async with store.pool.connection() as conn:
        await conn.execute(f"VACUUM ANALYZE {s}.messages")
        await conn.execute(f"VACUUM ANALYZE {s}.session_stats")


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = [plan]
    for child in plan.get("Plans", []):
        out.extend(_nodes(child))
    return out


async def _explain(store: PostgresMemory, sql: str, params: Any) -> dict[str, Any]:
    async with store.pool.connection() as conn:
        cursor = await conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
        row = await cursor.fetchone()
    assert row is not None
    document = row[0] if not isinstance(row[0], str) else json.loads(row[0])
    plan: dict[str, Any] = document[0]["Plan"]
    return plan


def _queries(store: PostgresMemory) -> dict[str, tuple[str, Any]]:
    sql = store._sql
    recent = sql.recent.format(filters="")
    recent_platform = sql.recent.format(filters="AND platform = %(platform)s")
    return {
        "get_history(50)": (sql.history, {"sid": SESSION, "limit": 50}),
        "count_history": (sql.count, (SESSION,)),
        "archive_span(20) span": (sql.active_span, (SESSION, 20)),
        "get_full_history(50)": (sql.newest, {"sid": SESSION, "limit": 50}),
        "cross-session(100)": (recent, {"roles": ["user", "assistant"], "limit": 100}),
        "cross-session platform(100)": (
            recent_platform,
            {"roles": ["user", "assistant"], "limit": 100, "platform": "web"},
        ),
        # By id: the unique index messages_id, whatever the sessions' sizes.
        "get_messages_by_ids(3)": (sql.by_ids, ([f"{SESSION}-5", "other-1-7", "tiny-3"],)),
    }


async def test_every_read_touches_the_same_pages_at_ten_times_the_size(
    memory: PostgresMemory,
) -> None:
    blocks: dict[int, dict[str, int]] = {}
    for total in (2_000, 20_000):
        await _grow(memory, total)
        blocks[total] = {}
        for name, (sql, params) in _queries(memory).items():
            plan = await _explain(memory, sql, params)
            kinds = {node["Node Type"] for node in _nodes(plan)}
            assert "Seq Scan" not in kinds, (name, total, kinds)
            for node in _nodes(plan):
                if node["Node Type"] == "Sort":
                    # Only the merge of already-limited ranges may sort (full history: 2 x 50).
                    assert node["Actual Rows"] <= 100, (name, node)
            blocks[total][name] = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]
    for name, small in blocks[2_000].items():
        large = blocks[20_000][name]
        assert large <= small + SLACK_BLOCKS, f"{name}: {small} blocks at 2k, {large} at 20k"


@pytest.mark.parametrize("limit", [10, 200])
async def test_get_history_reads_what_it_returns_not_the_session(
    memory: PostgresMemory, limit: int
) -> None:
    await _grow(memory, 20_000)
    plan = await _explain(memory, memory._sql.history, {"sid": SESSION, "limit": limit})
    touched = sum(
        node.get("Actual Rows", 0) * node.get("Actual Loops", 1)
        for node in _nodes(plan)
        if "Scan" in node["Node Type"]
    )
    # The boundary walk passes limit+1 conversation rows and the markers between them (one in
    # ten here); the read returns the rows after it: a few times limit, never the 2,000 active.
    assert touched <= 4 * limit + 10, touched
    history = await memory.get_history(SESSION, limit)
    assert sum(1 for m in history if m.kind != "compression") == limit
