"""The snapshot with identities, read in chunks: ids and positions line up across chunks."""

from __future__ import annotations

from pathlib import Path

from aalis_plugin_memory_sqlite import _exact as exact, _schema as schema
from aalis_plugin_memory_sqlite._codec import message_columns
from aalis_schema_message import Message

T0 = 1_700_000_000_000


def test_snapshot_longer_than_a_chunk_skips_a_corrupt_row_and_keeps_ids_aligned(
    tmp_path: Path,
) -> None:
    conn = schema.connect(tmp_path / "memory.db")
    try:
        size = exact.SNAPSHOT_CHUNK * 2 + 7
        bad = exact.SNAPSHOT_CHUNK + 3  # a row in the second chunk
        conn.execute("BEGIN IMMEDIATE")
        for i in range(size):
            timestamp, control, kind, role, platform, ident, data = message_columns(
                Message(role="user", content=f"m{i}", id=f"id{i}"), T0 + i
            )
            if i == bad:
                data = "{not json"
            conn.execute(
                "INSERT INTO messages (session_id, timestamp, archived, control, kind, role,"
                " platform, message_id, data) VALUES ('s', ?, 0, ?, ?, ?, ?, ?, ?)",
                (timestamp, control, kind, role, platform, ident, data),
            )
        conn.execute("COMMIT")
        rows = conn.execute(
            "SELECT seq, data FROM messages WHERE session_id = 's' ORDER BY timestamp, seq"
        ).fetchall()
        reported: list[int] = []

        messages, ids = exact.history_snapshot(conn, "s", lambda i, _e: reported.append(i))

        assert reported == [bad]
        assert [m.content for m in messages] == [f"m{i}" for i in range(size) if i != bad]
        assert ids == [
            exact.message_id(seq, data) for i, (seq, data) in enumerate(rows) if i != bad
        ]
    finally:
        conn.close()
