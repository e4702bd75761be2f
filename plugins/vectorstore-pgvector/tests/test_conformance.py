"""The vectorstore kit on a real PostgreSQL + pgvector (the run's one server), with no skip."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aalis_api_vectorstore_conformance import VectorStoreConformance
from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore
from aalis_plugin_vectorstore_pgvector._codec import escape
from aalis_test_support.postgres import TestServer, fresh_schema


class TestPgvectorConformance(VectorStoreConformance):
    # HNSW is approximate: the kit's exactness test asks for recall against brute force.
    exact = False

    @pytest_asyncio.fixture
    async def vectorstore(self, pg_server: TestServer) -> AsyncIterator[PgvectorStore]:
        with fresh_schema(pg_server, "v") as schema:
            store = await PgvectorStore.connect(
                PgvectorConfig(uri=pg_server.uri, schema=schema, max_pool_size=4)
            )
            try:
                yield store
            finally:
                await store.close()

    async def damage_lexical(self, store: PgvectorStore, message_id: str, how: str) -> None:
        # Behind the store's back: the column emptied, or holding another text's terms.
        value = "''::tsvector" if how == "missing" else "array_to_tsvector('{other,words}')"
        async with store.pool.connection() as conn:
            await conn.execute(
                f"UPDATE {store._s}.vectors SET lex = {value} WHERE message_id = %s",
                (escape(message_id),),
            )


async def test_vectors_from_before_identity_are_dropped_and_their_sessions_named(
    pg_server: TestServer,
) -> None:
    # A schema of version 1 (keyed on session, timestamp, role): its vectors have no
    # message id, so the migration drops them and remembers their sessions.
    import psycopg

    with fresh_schema(pg_server, "vm") as schema:
        s = f'"{schema}"'
        with psycopg.connect(pg_server.uri, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
            conn.execute(
                f"CREATE TABLE {s}.aalis_migrations (version integer PRIMARY KEY,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            conn.execute(
                f"""CREATE TABLE {s}.vectors (session_id text COLLATE "C" NOT NULL,
                    ts bigint NOT NULL, role text COLLATE "C" NOT NULL,
                    model_id text COLLATE "C" NOT NULL, text text NOT NULL,
                    platform text COLLATE "C", user_id text COLLATE "C",
                    embedding vector NOT NULL, PRIMARY KEY (session_id, ts, role))"""
            )
            conn.execute(f"CREATE INDEX vectors_scope ON {s}.vectors (model_id, session_id)")
            conn.execute(
                f'CREATE TABLE {s}.models (model_id text COLLATE "C" PRIMARY KEY,'
                " dim integer NOT NULL)"
            )
            conn.execute(f"INSERT INTO {s}.aalis_migrations (version) VALUES (1)")
            conn.execute(f"INSERT INTO {s}.models VALUES ('m', 2)")
            for sid, ts in (("a", 1), ("a", 2), ("b", 1)):
                conn.execute(
                    f"INSERT INTO {s}.vectors VALUES (%s, %s, 'user', 'm', 'old', NULL, NULL,"
                    " '[1,0]')",
                    (sid, ts),
                )
        store = await PgvectorStore.connect(PgvectorConfig(uri=pg_server.uri, schema=schema))
        try:
            assert (await store.stats()).total == 0
            assert await store.dropped_sessions() == ["a", "b"]
            await store.acknowledge_dropped(["a"])
            assert await store.dropped_sessions() == ["b"]
        finally:
            await store.close()
