"""The statements of ``PostgresMemory`` (its job modules), with the schema name filled in once.

Why each statement has its shape is said beside it; the indexes they rely on are in
``schema.py``, and ``tests/test_plans.py`` checks the plans of the hot ones with EXPLAIN.
"""

from __future__ import annotations

from aalis_plugin_memory_postgres._codec import INT64_MIN
from aalis_plugin_memory_postgres._schema import quote_schema


class StoreSql:
    """Every statement of the store, with the schema name filled in once."""

    def __init__(self, schema: str) -> None:
        s = quote_schema(schema)
        m, st, md = f"{s}.messages", f"{s}.session_stats", f"{s}.metadata"
        self.save = (
            f"WITH stats AS (INSERT INTO {st} AS t (session_id, active, active_conv, archived,"
            " last_ts) VALUES (%(sid)s, 1, %(conv)s, 0, %(ts)s) ON CONFLICT (session_id) DO UPDATE"
            " SET active = t.active + 1, active_conv = t.active_conv + excluded.active_conv,"
            " last_ts = greatest(t.last_ts, excluded.last_ts) RETURNING 1)"
            f" INSERT INTO {m} (session_id, ts, control, kind, role, platform, data, id)"
            " SELECT %(sid)s, %(ts)s, %(control)s, %(kind)s, %(role)s, %(platform)s, %(data)s,"
            " %(id)s FROM stats"
        )
        # The boundary is the (limit+1)-th newest active conversation row, found backwards on
        # the session index; the result is every active row after it.
        self.history = (
            "WITH boundary AS ("
            f" SELECT ts, seq FROM {m} WHERE session_id = %(sid)s AND NOT archived"
            " AND NOT control ORDER BY ts DESC, seq DESC OFFSET %(limit)s LIMIT 1)"
            f" SELECT data FROM {m} WHERE session_id = %(sid)s AND NOT archived"
            f" AND (ts, seq) > (SELECT coalesce((SELECT ts FROM boundary), {INT64_MIN}),"
            " coalesce((SELECT seq FROM boundary), -1))"
            " ORDER BY ts, seq"
        )
        self.history_all = (
            f"SELECT data FROM {m} WHERE session_id = %s AND NOT archived ORDER BY ts, seq"
        )
        self.count = f"SELECT active_conv FROM {st} WHERE session_id = %s"
        self.lock_session = f"SELECT 1 FROM {st} WHERE session_id = %s FOR UPDATE"
        # The newest N of a session, archived and active together: each range walked backwards
        # on its own part of the session index, then merged.
        self.newest = (
            f"SELECT seq, ts, data FROM ("
            f" (SELECT seq, ts, data FROM {m} WHERE session_id = %(sid)s AND NOT archived"
            "  ORDER BY ts DESC, seq DESC LIMIT %(limit)s)"
            " UNION ALL"
            f" (SELECT seq, ts, data FROM {m} WHERE session_id = %(sid)s AND archived"
            "  ORDER BY ts DESC, seq DESC LIMIT %(limit)s)"
            ") AS newest ORDER BY ts DESC, seq DESC LIMIT %(limit)s"
        )
        self.all_rows = (
            f"SELECT seq, ts, data, archived FROM {m} WHERE session_id = %s ORDER BY ts, seq"
        )
        self.active_span = (
            f"SELECT seq, control FROM {m} WHERE session_id = %s AND NOT archived"
            " ORDER BY ts, seq LIMIT %s"
        )
        self.archive = f"UPDATE {m} SET archived = true WHERE seq = ANY(%s)"
        self.archive_stats = (
            f"UPDATE {st} SET active = active - %(n)s, active_conv = active_conv - %(conv)s,"
            " archived = archived + %(n)s WHERE session_id = %(sid)s"
        )
        self.clear_messages = f"DELETE FROM {m} WHERE session_id = %s"
        self.clear_stats = f"DELETE FROM {st} WHERE session_id = %s"
        self.clear_all_stats = f"DELETE FROM {st}"
        self.clear_all_messages = f"DELETE FROM {m}"
        self.range_part = (
            f"SELECT ts, seq, data FROM {m} WHERE session_id = %(sid)s AND {{archived}}"
            " AND ts >= %(start)s AND ts <= %(end)s {filters}"
            " ORDER BY ts, seq LIMIT %(limit)s"
        )
        self.recent = (
            f"SELECT session_id, data FROM {m} WHERE NOT archived AND role = ANY(%(roles)s)"
            " {filters} ORDER BY ts DESC, seq DESC LIMIT %(limit)s"
        )
        self.update_data = f"UPDATE {m} SET data = %s WHERE seq = %s"
        self.delete_by_ts = (
            f"DELETE FROM {m} WHERE session_id = %s AND ts = ANY(%s) RETURNING archived, control"
        )
        # By id (the unique index messages_id): any session, archived included.
        self.by_ids = f"SELECT session_id, archived, data FROM {m} WHERE id = ANY(%s)"
        self.delete_by_ids = (
            f"DELETE FROM {m} WHERE session_id = %s AND id = ANY(%s) RETURNING archived, control"
        )
        self.last_ts = (
            f"SELECT greatest((SELECT max(ts) FROM {m} WHERE session_id = %(sid)s AND NOT archived),"
            f" (SELECT max(ts) FROM {m} WHERE session_id = %(sid)s AND archived))"
        )
        self.subtract_stats = (
            f"UPDATE {st} SET active = active - %(active)s, active_conv = active_conv - %(conv)s,"
            " archived = archived - %(archived)s, last_ts = %(last)s WHERE session_id = %(sid)s"
        )
        self.sessions = (
            f"SELECT session_id, active, archived, last_ts FROM {st}"
            " ORDER BY last_ts DESC, session_id"
        )
        self.import_stats = (
            f"INSERT INTO {st} AS t (session_id, active, active_conv, archived, last_ts)"
            " VALUES (%(sid)s, %(active)s, %(conv)s, %(archived)s, %(ts)s)"
            " ON CONFLICT (session_id) DO UPDATE SET active = t.active + excluded.active,"
            " active_conv = t.active_conv + excluded.active_conv,"
            " archived = t.archived + excluded.archived,"
            " last_ts = greatest(t.last_ts, excluded.last_ts)"
        )
        self.import_row = (
            f"INSERT INTO {m} (session_id, ts, archived, control, kind, role, platform, data, id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        )
        self.put = (
            f"INSERT INTO {md} (namespace, key, data, updated_at) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data,"
            " updated_at = excluded.updated_at"
        )
        self.delete = f"DELETE FROM {md} WHERE namespace = %s AND key = %s"
        self.get = f"SELECT data FROM {md} WHERE namespace = %s AND key = %s"
        self.list = f"SELECT key, data, updated_at FROM {md} WHERE namespace = %s ORDER BY key"
        self.keys = f"SELECT key FROM {md} WHERE namespace = %s ORDER BY key"
        self.namespaces = f"SELECT DISTINCT namespace FROM {md} ORDER BY namespace"


__all__ = ["StoreSql"]
