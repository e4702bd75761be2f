"""The schema migrations of memory-sqlite, as a ``sqlite_utils.Migrations`` set.

Kept apart from ``schema.py`` so that sqlite-utils is imported only when a file actually
needs migrating; see ``schema.py`` for how and when they are applied.

Never edit a migration once released; add a new one (and its name to
``versions.MIGRATION_NAMES``).
"""

from __future__ import annotations

import sqlite3

from aalis_schema_message import CONTROL_KINDS, new_message_id
from sqlite_utils import Database, Migrations

from aalis_plugin_memory_sqlite._transaction import transaction
from aalis_plugin_memory_sqlite._versions import (
    MIGRATION_NAMES,
    MIGRATION_SET,
    SCHEMA_VERSION,
    user_version,
)

migrations = Migrations(MIGRATION_SET)


@migrations(name=MIGRATION_NAMES[0])
def _m0001(db: Database) -> None:
    db.table("messages").create(
        {
            "seq": int,
            "session_id": str,
            "timestamp": int,
            "archived": int,
            "kind": str,
            "role": str,
            "data": str,
        },
        pk="seq",
        not_null={"session_id", "timestamp", "archived", "role", "data"},
        defaults={"archived": 0},
    )
    db.table("messages").create_index(
        ["session_id", "archived", "timestamp"], index_name="messages_session"
    )
    db.table("metadata").create(
        {"namespace": str, "key": str, "data": str, "updated_at": int},
        pk=("namespace", "key"),
        not_null={"namespace", "key", "data", "updated_at"},
    )


@migrations(name=MIGRATION_NAMES[1])
def _m0002(db: Database) -> None:
    messages = db.table("messages")
    # ``control`` makes "conversation message" an indexable column instead of a kind list
    # repeated in every query; ``platform`` lets the cross-session filter run in SQL.
    messages.add_column("control", int, not_null_default=0)
    messages.add_column("platform", str)
    kinds = sorted(CONTROL_KINDS)
    marks = ",".join("?" for _ in kinds)
    db.execute(f"UPDATE messages SET control = 1 WHERE kind IN ({marks})", kinds)
    db.execute(
        """UPDATE messages SET platform = json_extract(data, '$.metadata.platform')
           WHERE json_valid(data) AND json_type(data, '$.metadata.platform') = 'text'"""
    )
    # (session_id, archived, timestamp, seq, control): active rows of a session are one
    # contiguous range in (timestamp, seq) order, and ``control`` is covered so the
    # get_history boundary is found without touching the table.
    db.execute('DROP INDEX "messages_session"')
    db.table("messages").create_index(
        ["session_id", "archived", "timestamp", "seq", "control"], index_name="messages_session"
    )
    # Cross-session reads walk active rows newest first; partial indexes hold active rows only.
    db.execute('CREATE INDEX "messages_recent" ON "messages" ("timestamp") WHERE archived = 0')
    db.execute(
        'CREATE INDEX "messages_recent_platform" ON "messages" ("platform", "timestamp") '
        "WHERE archived = 0 AND platform IS NOT NULL"
    )
    # One row per session, updated in the same transaction as every message write, so
    # count_history and list_sessions never count rows. WITHOUT ROWID: one b-tree, one page
    # touched per save.
    db.execute(
        """CREATE TABLE "session_stats" (
               "session_id" TEXT NOT NULL PRIMARY KEY,
               "active" INTEGER NOT NULL,
               "active_conv" INTEGER NOT NULL,
               "archived" INTEGER NOT NULL,
               "last_ts" INTEGER NOT NULL
           ) WITHOUT ROWID"""
    )
    db.execute(
        """INSERT INTO session_stats (session_id, active, active_conv, archived, last_ts)
           SELECT session_id,
                  sum(archived = 0),
                  sum(archived = 0 AND control = 0),
                  sum(archived != 0),
                  max(timestamp)
           FROM messages GROUP BY session_id"""
    )


#: Rows named per statement by migration 3 (bounded memory on a file of any size).
_ID_CHUNK = 2_000


@migrations(name=MIGRATION_NAMES[2])
def _m0003(db: Database) -> None:
    # Message identity (docs/reference/memory-contract.md, "Message identity"): every row gets
    # an id, kept in the ``message_id`` column (unique: a second message with a stored id is
    # refused by the index) and inside ``data`` (so every read returns it at no extra cost).
    # Ids of existing rows are new ULIDs (``new_message_id``) drawn in ``seq`` order, like
    # the ids of new saves: random, so a store migrated later into another one never
    # collides with it; the whole migration is one transaction, so a crash leaves no row
    # half-named (the file stays at version 2 and is migrated again on the next open).
    db.table("messages").add_column("message_id", str)
    conn = db.conn
    last = -1
    while True:
        seqs = [
            row[0]
            for row in conn.execute(
                "SELECT seq FROM messages WHERE seq > ? ORDER BY seq LIMIT ?", (last, _ID_CHUNK)
            )
        ]
        if not seqs:
            break
        last = seqs[-1]
        # A row that is not a JSON object (damaged, hand-edited) keeps its text: reads skip
        # it anyway, and its column id still keeps the index honest.
        conn.executemany(
            "UPDATE messages SET message_id = ?1, data = CASE"
            " WHEN json_valid(data) AND json_type(data) = 'object'"
            " THEN json_set(data, '$.id', ?1) ELSE data END WHERE seq = ?2",
            [(new_message_id(), seq) for seq in seqs],
        )
    db.execute('CREATE UNIQUE INDEX "messages_id" ON "messages" ("message_id")')


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply pending migrations up to ``target`` in one immediate transaction.

    Returns the schema version afterwards. ``target`` below ``SCHEMA_VERSION`` exists for the
    tests that build an old file.
    """
    if user_version(conn) >= target:
        return user_version(conn)
    db = Database(conn, recursive_triggers=False, execute_plugins=False)
    with transaction(conn):
        current = user_version(conn)
        if current < target:
            stop_before = MIGRATION_NAMES[target] if target < len(MIGRATION_NAMES) else None
            migrations.apply(db, stop_before=stop_before)
            conn.execute(f"PRAGMA user_version = {int(target)}")
    return user_version(conn)


__all__ = ["migrate", "migrations"]
