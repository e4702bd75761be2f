"""A minimal memory backend on the standard library's sqlite3: the required methods only.

It is the worked example of docs/backends/implementing.md, and it passes the conformance
kit (tests/docs/test_backend_example.py runs it); every optional method is left out, so the
kit skips those tests with a reason. The shared helpers of ``aalis_api_memory.validation``
do the argument checks, so bad input is refused exactly as every other backend refuses it.
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from aalis_api_memory import MetadataEntry, MetadataOp, Put
from aalis_api_memory.validation import (
    DEFAULT_HISTORY_LIMIT,
    check_count,
    check_keep,
    check_key,
    check_limit,
    check_message,
    check_namespace,
    check_session_id,
    decode_metadata,
    encode_batch,
)
from aalis_schema_message import CONTROL_KINDS, Message, now_ms

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,   -- insertion sequence: breaks timestamp ties
    session_id TEXT NOT NULL,
    timestamp  INTEGER NOT NULL,
    archived   INTEGER NOT NULL DEFAULT 0,
    control    INTEGER NOT NULL,                    -- kind in CONTROL_KINDS: not counted
    body       TEXT NOT NULL                        -- Message.to_json(), every field kept
);
CREATE INDEX IF NOT EXISTS messages_order ON messages (session_id, archived, timestamp, seq);
CREATE TABLE IF NOT EXISTS metadata (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    data       TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
);
"""


class MinimalSqliteMemory:
    """``MemoryService`` on one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str = ":memory:") -> None:
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one transaction, off the event loop (sqlite3 blocks)."""

        def transaction() -> T:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    result = work(self._db)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                return result

        return await asyncio.to_thread(transaction)

    def _active(self, db: sqlite3.Connection, session_id: str) -> list[tuple[int, int, str]]:
        return db.execute(
            "SELECT seq, control, body FROM messages WHERE session_id = ? AND archived = 0 "
            "ORDER BY timestamp, seq",
            (session_id,),
        ).fetchall()

    # -- history ---------------------------------------------------------------------------

    async def save_message(self, session_id: str, message: Message) -> None:
        check_session_id(session_id)
        check_message(message)
        timestamp = message.timestamp if message.timestamp is not None else now_ms()
        body = json.dumps(message.with_timestamp(timestamp).to_json())
        control = int(message.kind in CONTROL_KINDS)
        await self._run(
            lambda db: db.execute(
                "INSERT INTO messages (session_id, timestamp, control, body) VALUES (?, ?, ?, ?)",
                (session_id, timestamp, control, body),
            )
        )

    async def get_history(self, session_id: str, limit: int | float | None = None) -> list[Message]:
        check_session_id(session_id)
        wanted = check_limit(limit, DEFAULT_HISTORY_LIMIT)
        if wanted == 0:
            return []
        rows = await self._run(lambda db: self._active(db, session_id))
        start = 0
        if wanted != math.inf:  # everything after the (limit+1)-th newest conversation message
            seen = 0
            for index in range(len(rows) - 1, -1, -1):
                seen += 0 if rows[index][1] else 1
                if seen > wanted:
                    start = index + 1
                    break
        # A fresh Message per read: callers mutating one change nothing stored.
        return [Message.from_json(json.loads(body)) for _, _, body in rows[start:]]

    async def archive_span(
        self, session_id: str, count: int | float, keep: Sequence[int] = ()
    ) -> int:
        check_session_id(session_id)
        span = check_count(count)
        kept = check_keep(keep)

        def archive(db: sqlite3.Connection) -> int:
            rows = self._active(db, session_id)
            chosen = rows if span == math.inf else rows[: int(span)]
            seqs = [(seq,) for position, (seq, _, _) in enumerate(chosen) if position not in kept]
            db.executemany("UPDATE messages SET archived = 1 WHERE seq = ?", seqs)
            return len(seqs)

        return await self._run(archive)

    async def clear_session(self, session_id: str) -> None:
        check_session_id(session_id)
        await self._run(
            lambda db: db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        )

    # -- metadata --------------------------------------------------------------------------

    async def save_metadata(self, namespace: str, key: str, data: dict[str, Any]) -> None:
        await self.commit_metadata([Put(namespace, key, data)])  # checks all three

    async def get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        check_namespace(namespace)
        check_key(key)
        row = await self._run(
            lambda db: db.execute(
                "SELECT data FROM metadata WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
        )
        return None if row is None else decode_metadata(row[0])

    async def list_metadata(self, namespace: str) -> list[MetadataEntry]:
        check_namespace(namespace)
        rows = await self._run(
            lambda db: db.execute(
                "SELECT key, data, updated_at FROM metadata WHERE namespace = ? ORDER BY key",
                (namespace,),
            ).fetchall()
        )
        entries = [(key, decode_metadata(text), updated_at) for key, text, updated_at in rows]
        return [
            MetadataEntry(key=key, data=data, updated_at=updated_at)
            for key, data, updated_at in entries
            if data is not None  # unreadable entries are skipped
        ]

    async def delete_metadata(self, namespace: str, key: str) -> None:
        check_namespace(namespace)
        check_key(key)
        await self._run(
            lambda db: db.execute(
                "DELETE FROM metadata WHERE namespace = ? AND key = ?", (namespace, key)
            )
        )

    async def commit_metadata(self, ops: Sequence[MetadataOp]) -> None:
        batch = encode_batch(ops)  # the whole batch is checked before anything is written
        stamp = now_ms()

        def apply(db: sqlite3.Connection) -> None:
            for op, namespace, key, text in batch:
                if op == "put":
                    db.execute(
                        "INSERT OR REPLACE INTO metadata VALUES (?, ?, ?, ?)",
                        (namespace, key, text, stamp),
                    )
                else:
                    db.execute(
                        "DELETE FROM metadata WHERE namespace = ? AND key = ?", (namespace, key)
                    )

        await self._run(apply)
