"""A minimal memory backend on the standard library's sqlite3: the required methods only.

It is the worked example of docs/backends/implementing.md, and it passes the conformance
kit (tests/docs/test_backend_example.py runs it); every optional method is left out, so the
kit skips those tests with a reason. ``MemoryBackend`` does the argument checks and the
defaults, so bad input is refused exactly as every other backend refuses it, and each
method below only stores: it receives checked, normalised values.
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from aalis_api_memory import (
    EncodedOp,
    MemoryBackend,
    MessageIdConflict,
    MetadataEntry,
    decode_metadata,
)
from aalis_schema_message import CONTROL_KINDS, Message

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,   -- insertion sequence: breaks timestamp ties
    session_id TEXT NOT NULL,
    timestamp  INTEGER NOT NULL,
    archived   INTEGER NOT NULL DEFAULT 0,
    control    INTEGER NOT NULL,                    -- kind in CONTROL_KINDS: not counted
    message_id TEXT NOT NULL UNIQUE,                -- Message.id: unique in the store
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


class MinimalSqliteMemory(MemoryBackend):
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

    async def _save_message(self, session_id: str, message: Message, timestamp: int) -> None:
        body = json.dumps(message.with_timestamp(timestamp).to_json())  # its id included
        control = int(message.kind in CONTROL_KINDS)
        try:
            await self._run(
                lambda db: db.execute(
                    "INSERT INTO messages (session_id, timestamp, control, message_id, body)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (session_id, timestamp, control, message.id, body),
                )
            )
        except sqlite3.IntegrityError:  # the UNIQUE column: the id is stored already
            raise MessageIdConflict(f"message id {message.id!r} is already stored") from None

    async def _get_history(self, session_id: str, limit: int | float) -> list[Message]:
        rows = await self._run(lambda db: self._active(db, session_id))
        start = 0
        if limit != math.inf:  # everything after the (limit+1)-th newest conversation message
            seen = 0
            for index in range(len(rows) - 1, -1, -1):
                seen += 0 if rows[index][1] else 1
                if seen > limit:
                    start = index + 1
                    break
        # A fresh Message per read: callers mutating one change nothing stored.
        return [Message.from_json(json.loads(body)) for _, _, body in rows[start:]]

    async def _archive_span(self, session_id: str, count: int | float, keep: frozenset[int]) -> int:
        def archive(db: sqlite3.Connection) -> int:
            rows = self._active(db, session_id)
            chosen = rows if count == math.inf else rows[: int(count)]
            seqs = [(seq,) for position, (seq, _, _) in enumerate(chosen) if position not in keep]
            db.executemany("UPDATE messages SET archived = 1 WHERE seq = ?", seqs)
            return len(seqs)

        return await self._run(archive)

    async def _clear_session(self, session_id: str) -> None:
        await self._run(
            lambda db: db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        )

    # -- metadata (save_metadata and delete_metadata default to a batch of one) ------------

    async def _get_metadata(self, namespace: str, key: str) -> dict[str, Any] | None:
        row = await self._run(
            lambda db: db.execute(
                "SELECT data FROM metadata WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
        )
        return None if row is None else decode_metadata(row[0])

    async def _list_metadata(self, namespace: str) -> list[MetadataEntry]:
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

    async def _commit_metadata(self, ops: Sequence[EncodedOp], updated_at: int) -> None:
        def apply(db: sqlite3.Connection) -> None:
            for op, namespace, key, text in ops:
                if op == "put":
                    db.execute(
                        "INSERT OR REPLACE INTO metadata VALUES (?, ?, ?, ?)",
                        (namespace, key, text, updated_at),
                    )
                else:
                    db.execute(
                        "DELETE FROM metadata WHERE namespace = ? AND key = ?", (namespace, key)
                    )

        await self._run(apply)
