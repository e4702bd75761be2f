"""The schema of the pgvector store: its tables, their migrations, one HNSW index per model.

One table holds every model's vectors in an untyped ``vector`` column; each model gets its own
HNSW index on ``(embedding::vector(dim)) vector_cosine_ops`` restricted to that model (a
partial expression index), named from a checksum of the model id (``index_name``).
Migration 3 adds the lexical leg: a ``lex`` column of terms (``_lexical.py``) under a GIN index.
Migration 4 adds ``vectors_model_ts (model_id, ts)``: a lexical query of common words across
every session ranks the newest matches, found walking it backwards instead of sorting them all.
Migrations are numbered in ``aalis_migrations``; ``migrate`` applies the missing ones in one
transaction under an advisory lock, so several hosts starting at once migrate once.
"""

from __future__ import annotations

import zlib
from typing import Any

from aalis_api_vectorstore import VectorStoreUnavailable
from psycopg import AsyncConnection, sql

from aalis_plugin_vectorstore_pgvector._codec import escape, unescape
from aalis_plugin_vectorstore_pgvector._lexical import document_terms

SCHEMA_VERSION = 4
#: Rows re-indexed per statement when migration 3 computes the terms of stored messages.
BACKFILL_BATCH = 1_000


def index_name(model_id: str) -> str:
    """The name of the model's HNSW index (a checksum: model ids may be any text)."""
    return f"vectors_hnsw_{zlib.crc32(model_id.encode('utf-8')):08x}"


async def migrate(conn: AsyncConnection[Any], schema: str) -> None:
    """Create or migrate ``schema`` to ``SCHEMA_VERSION``, in one transaction under an advisory lock.

    Refuses (``VectorStoreUnavailable``, nothing changed) a schema of a newer version. The
    extension and the schema are created only when missing, so a role that owns a schema a DBA
    made for it, in a database with pgvector already created, needs no CREATE on the database.
    """
    s = '"' + schema + '"'
    async with conn.transaction():
        key = zlib.crc32(f"aalis-vectorstore-pgvector:{schema}".encode())
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
        cursor = await conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if await cursor.fetchone() is None:
            # Needs CREATE on the database; a DBA may have created it instead.
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        # CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema
        # exists: a role that owns a schema a DBA made for it must not need that grant.
        cursor = await conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        if await cursor.fetchone() is None:
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.aalis_migrations (version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await conn.execute(f"SELECT coalesce(max(version), 0) FROM {s}.aalis_migrations")
        row = await cursor.fetchone()
        current = int(row[0]) if row else 0
        if current > SCHEMA_VERSION:
            raise VectorStoreUnavailable(
                f"schema {schema!r} has version {current}; this plugin knows only up to "
                f"{SCHEMA_VERSION} (upgrade it; nothing was changed)"
            )
        if current < 1:
            await conn.execute(
                f"""CREATE TABLE {s}.vectors (
                    session_id text COLLATE "C" NOT NULL,
                    ts bigint NOT NULL,
                    role text COLLATE "C" NOT NULL,
                    model_id text COLLATE "C" NOT NULL,
                    text text NOT NULL,
                    platform text COLLATE "C",
                    user_id text COLLATE "C",
                    embedding vector NOT NULL,
                    PRIMARY KEY (session_id, ts, role))"""
            )
            await conn.execute(f"CREATE INDEX vectors_scope ON {s}.vectors (model_id, session_id)")
            await conn.execute(
                f'CREATE TABLE {s}.models (model_id text COLLATE "C" PRIMARY KEY,'
                " dim integer NOT NULL)"
            )
            await conn.execute(f"INSERT INTO {s}.aalis_migrations (version) VALUES (1)")
        if current < 2:
            # Keyed on the message id from now on. Vectors written before have none:
            # they are dropped and their sessions remembered until memory-vector has
            # recorded them as index gaps (re-embedded from the message store).
            await conn.execute(
                f'CREATE TABLE {s}.dropped_sessions (session_id text COLLATE "C" PRIMARY KEY)'
            )
            await conn.execute(
                f"INSERT INTO {s}.dropped_sessions SELECT DISTINCT session_id FROM {s}.vectors"
            )
            await conn.execute(f"DELETE FROM {s}.vectors")
            await conn.execute(f"ALTER TABLE {s}.vectors DROP CONSTRAINT vectors_pkey")
            await conn.execute(
                f'ALTER TABLE {s}.vectors ADD COLUMN message_id text COLLATE "C" NOT NULL'
            )
            await conn.execute(f"ALTER TABLE {s}.vectors ADD PRIMARY KEY (message_id)")
            await conn.execute(f"CREATE INDEX vectors_session_ts ON {s}.vectors (session_id, ts)")
            await conn.execute(f"INSERT INTO {s}.aalis_migrations (version) VALUES (2)")
        if current < 3:
            await _add_lexical_index(conn, s)
            await conn.execute(f"INSERT INTO {s}.aalis_migrations (version) VALUES (3)")
        if current < 4:
            await conn.execute(f"CREATE INDEX vectors_model_ts ON {s}.vectors (model_id, ts)")
            await conn.execute(f"INSERT INTO {s}.aalis_migrations (version) VALUES (4)")


async def _add_lexical_index(conn: AsyncConnection[Any], s: str) -> None:
    """Migration 3: the ``lex`` column (the terms of ``_lexical.py``) and its GIN index.

    The terms are computed here, in Python, for every stored message, in batches by message id,
    inside the migration's transaction: a failure leaves the schema at version 2. The column
    then loses its default, so a host of an older version still writing here fails loudly
    instead of storing messages the lexical leg can never find.
    """
    await conn.execute(f"ALTER TABLE {s}.vectors ADD COLUMN lex tsvector NOT NULL DEFAULT ''")
    last = ""
    while True:
        cursor = await conn.execute(
            f"SELECT message_id, text FROM {s}.vectors WHERE message_id > %s"
            " ORDER BY message_id LIMIT %s",
            (last, BACKFILL_BATCH),
        )
        rows = await cursor.fetchall()
        if not rows:
            break
        async with conn.cursor() as update:
            await update.executemany(
                f"UPDATE {s}.vectors SET lex = array_to_tsvector(%s::text[]) WHERE message_id = %s",
                [(document_terms(unescape(text)), mid) for mid, text in rows],
            )
        last = rows[-1][0]
    await conn.execute(f"ALTER TABLE {s}.vectors ALTER COLUMN lex DROP DEFAULT")
    # No pending list: rows are indexed as they are written (next to the HNSW insert the
    # cost is nothing), and the planner never sees an index whose pending list it must scan.
    await conn.execute(
        f"CREATE INDEX vectors_lex ON {s}.vectors USING gin (lex) WITH (fastupdate = off)"
    )


async def create_index(conn: AsyncConnection[Any], schema: str, model_id: str, dim: int) -> None:
    """(Re)create the model's partial HNSW index on ``embedding::vector(dim)``."""
    index = sql.Identifier(index_name(model_id))
    ident = sql.Identifier(schema)
    await conn.execute(sql.SQL("DROP INDEX IF EXISTS {}.{}").format(ident, index))
    await conn.execute(
        sql.SQL(
            "CREATE INDEX {} ON {}.vectors USING hnsw ((embedding::vector({})) vector_cosine_ops)"
            " WHERE model_id = {}"
        ).format(index, ident, sql.Literal(dim), sql.Literal(escape(model_id)))
    )


__all__ = ["SCHEMA_VERSION", "create_index", "index_name", "migrate"]
