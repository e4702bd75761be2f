"""The least-privilege role of docs/host/postgres.md ("Roles") runs the vector store.

The role owns its schema (``aalis_vectors`` in the recipe) and nothing else; pgvector was created once by a
role allowed to. The store must start (first and later starts) without CREATE on the database.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from aalis_plugin_vectorstore_pgvector import PgvectorConfig, PgvectorStore
from aalis_test_support.postgres import (
    TestServer,
    drop_schema,
    new_schema_name,
    uri_as,
)
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict


@pytest.fixture
def app_role(pg_server: TestServer) -> Iterator[tuple[str, str]]:
    role, schema = f"vec_{uuid.uuid4().hex[:12]}", new_schema_name("rv")
    with psycopg.connect(pg_server.uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # the DBA's one-time step
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw-for-tests'").format(sql.Identifier(role))
        )
        conn.execute(
            sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(
                sql.Identifier(schema), sql.Identifier(role)
            )
        )
        dbname = conninfo_to_dict(pg_server.uri).get("dbname") or "postgres"
        conn.execute(
            sql.SQL("REVOKE CREATE ON DATABASE {} FROM PUBLIC").format(sql.Identifier(str(dbname)))
        )
    try:
        yield uri_as(pg_server.uri, role, "pw-for-tests"), schema
    finally:
        drop_schema(pg_server.uri, schema)
        with psycopg.connect(pg_server.uri, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


async def test_a_role_that_owns_only_its_schema_starts_and_restarts(
    app_role: tuple[str, str],
) -> None:
    uri, schema = app_role
    config = PgvectorConfig(uri=uri, schema=schema, max_pool_size=2)
    for _start in range(2):
        store = await PgvectorStore.connect(config)
        await store.close()
