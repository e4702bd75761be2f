"""The tables and their versioned migrations, applied once per schema by whichever process wins.

``migrate`` runs every pending migration in ONE transaction under a transaction-level advisory
lock keyed on the schema's name: two processes (or hosts) starting on a new database at the same
moment serialise there, the second finds nothing pending, and a failure leaves the schema as it
was (PostgreSQL's DDL is transactional). ``aalis_migrations`` records each applied migration by
number and name; a schema that records a number this version does not know was written by a
newer plugin and is refused rather than misread.

Never edit a migration once released; append a new one.

Why the indexes are what they are (``tests/test_plans.py`` checks the plans with EXPLAIN):

* ``messages_session (session_id, archived, ts, seq) INCLUDE (control)``: a session's active
  rows are one contiguous range in history order, so ``get_history`` finds its boundary by an
  index-only scan backwards over ``limit + 1`` conversation entries and reads forward from
  there; ``archive_span`` reads the first ``count`` entries of the same range. Archived rows
  are a separate range of the same index (full history, range queries).
* ``messages_recent (ts, seq) WHERE NOT archived`` and ``messages_recent_platform``: the
  cross-session query walks active rows newest first and stops at ``limit`` matches.
* ``messages_id (id)`` unique: a message id is stored once in the whole schema (a second
  save or import of it fails as ``MessageIdConflict``), and ``get_messages_by_ids`` /
  ``delete_messages_by_ids`` find rows by it.
* ``session_stats``: one row per session, changed in the same transaction as every message
  write, so ``count_history`` and ``list_sessions`` never count rows; it is also the row every
  write to a session locks, which serialises writers of one session across processes.

Text columns use ``COLLATE "C"``: byte order of UTF-8 is code point order, what Python's
``sorted`` gives, whatever locale the server was initialised with.
"""

from __future__ import annotations

import zlib

from aalis_api_memory import SchemaTooNew
from psycopg import AsyncConnection

#: Each migration is a list of statements; ``{s}`` is the quoted schema name.
MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "0001_messages_metadata_stats",
        (
            """CREATE TABLE {s}.messages (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session_id text COLLATE "C" NOT NULL,
                ts bigint NOT NULL,
                archived boolean NOT NULL DEFAULT false,
                control boolean NOT NULL,
                kind text COLLATE "C",
                role text COLLATE "C" NOT NULL,
                platform text COLLATE "C",
                data text NOT NULL
            )""",
            "CREATE INDEX messages_session ON {s}.messages (session_id, archived, ts, seq)"
            " INCLUDE (control)",
            "CREATE INDEX messages_recent ON {s}.messages (ts, seq) WHERE NOT archived",
            "CREATE INDEX messages_recent_platform ON {s}.messages (platform, ts, seq)"
            " WHERE NOT archived AND platform IS NOT NULL",
            """CREATE TABLE {s}.session_stats (
                session_id text COLLATE "C" PRIMARY KEY,
                active bigint NOT NULL,
                active_conv bigint NOT NULL,
                archived bigint NOT NULL,
                last_ts bigint NOT NULL
            )""",
            "CREATE INDEX session_stats_recent ON {s}.session_stats (last_ts DESC, session_id)",
            """CREATE TABLE {s}.metadata (
                namespace text COLLATE "C" NOT NULL,
                key text COLLATE "C" NOT NULL,
                data text NOT NULL,
                updated_at bigint NOT NULL,
                PRIMARY KEY (namespace, key)
            )""",
        ),
    ),
    (
        # Message identity (docs/backends/postgres.md, "Message ids"): every stored message
        # gets an id, in the column (unique in the schema) and in its JSON (what reads
        # return). A random UUID's 32 hex digits: never a ULID (26 characters), so it cannot
        # collide with an id made later, nor, in practice, with another store's after a copy.
        # Rows whose text is not a JSON object (damaged by hand: reads skip them) get the
        # column only.
        "0002_message_ids",
        (
            'ALTER TABLE {s}.messages ADD COLUMN id text COLLATE "C"',
            "UPDATE {s}.messages SET id = replace(gen_random_uuid()::text, '-', '')",
            """UPDATE {s}.messages SET data = '{{"id":' || to_json(id)::text || ','"""
            " || substr(data, 2) WHERE data LIKE '{{%' AND data NOT LIKE '{{}}%'",
            "ALTER TABLE {s}.messages ALTER COLUMN id SET NOT NULL",
            "CREATE UNIQUE INDEX messages_id ON {s}.messages (id)",
        ),
    ),
    (
        # Leases (aalis_api_memory._leases, leases.py): the turn lease of ``run_turn``.
        "0003_leases",
        (
            """CREATE TABLE {s}.leases (
                name text COLLATE "C" PRIMARY KEY,
                holder text COLLATE "C" NOT NULL,
                expires_at timestamptz NOT NULL
            )""",
        ),
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


def quote_schema(schema: str) -> str:
    """The schema as a quoted identifier (the config already limits it to ``[a-z0-9_]``)."""
    return '"' + schema.replace('"', '""') + '"'


def _lock_key(schema: str) -> int:
    # A stable 32-bit key per schema, so unrelated schemas never wait for each other.
    return zlib.crc32(f"aalis-memory-postgres:{schema}".encode())


async def ensure_schema(conn: AsyncConnection[object], schema: str) -> None:
    """Create ``schema`` only when it does not exist yet.

    ``CREATE SCHEMA IF NOT EXISTS`` checks the CREATE privilege on the database *before* it
    looks for the schema, so a least-privilege role that owns a schema a DBA created for it
    (docs/host/postgres.md, "Roles") would fail on every start. Looking in ``pg_namespace``
    first needs no privilege; a role allowed to create schemas still gets one made for it.
    """
    cursor = await conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
    if await cursor.fetchone() is None:
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_schema(schema)}")


async def migrate(
    conn: AsyncConnection[object], schema: str, *, target: int = SCHEMA_VERSION
) -> int:
    """Create or migrate ``schema`` up to ``target``; returns the version afterwards."""
    s = quote_schema(schema)
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(schema),))
        await ensure_schema(conn, schema)
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.aalis_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await conn.execute(f"SELECT coalesce(max(version), 0) FROM {s}.aalis_migrations")
        row = await cursor.fetchone()
        current = int(row[0]) if row else 0  # type: ignore[index]
        if current > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"schema {schema!r} has version {current}, but this aalis-plugin-memory-postgres "
                f"knows only up to {SCHEMA_VERSION}; upgrade the plugin (nothing was changed)"
            )
        for version in range(current + 1, target + 1):
            name, statements = MIGRATIONS[version - 1]
            for statement in statements:
                await conn.execute(statement.format(s=s))
            await conn.execute(
                f"INSERT INTO {s}.aalis_migrations (version, name) VALUES (%s, %s)",
                (version, name),
            )
        return max(current, target)


__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SchemaTooNew",
    "ensure_schema",
    "migrate",
    "quote_schema",
]
