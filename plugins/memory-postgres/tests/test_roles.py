"""The least-privilege role of docs/host/postgres.md ("Roles") runs the store.

The recipe gives the application a role that owns its schema and nothing else: no CREATE on
the database. Every start must work for it, the first (tables created) and the later ones.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory
from aalis_schema_message import Message
from aalis_test_support.postgres import TestServer, drop_schema, new_schema_name, uri_as
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict


@pytest.fixture
def app_role(pg_server: TestServer) -> Iterator[tuple[str, str]]:
    """``(uri as the role, its schema)``, set up as the recipe says, dropped at the end."""
    role, schema = f"app_{uuid.uuid4().hex[:12]}", new_schema_name("r")
    with psycopg.connect(pg_server.uri, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw-for-tests'").format(sql.Identifier(role))
        )
        conn.execute(
            sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(
                sql.Identifier(schema), sql.Identifier(role)
            )
        )
        dbname = conninfo_to_dict(pg_server.uri).get("dbname") or "postgres"
        # PUBLIC has no CREATE on a database unless someone granted it; make sure.
        conn.execute(
            sql.SQL("REVOKE CREATE ON DATABASE {} FROM PUBLIC").format(sql.Identifier(str(dbname)))
        )
        granted = conn.execute(
            "SELECT has_database_privilege(%s, current_database(), 'CREATE')", (role,)
        ).fetchone()
        assert granted == (False,)
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
    config = PostgresConfig(uri=uri, schema=schema, min_pool_size=1, max_pool_size=2)
    store = await PostgresMemory.connect(config)  # first start: creates the tables
    try:
        await store.save_message("s", Message(role="user", content="hello", timestamp=1))
    finally:
        await store.close()
    store = await PostgresMemory.connect(config)  # a later start: checks the version
    try:
        assert [m.content for m in await store.get_history("s")] == ["hello"]
    finally:
        await store.close()


async def test_a_missing_schema_is_still_created_by_a_role_that_may(
    pg_config: PostgresConfig,
) -> None:
    # The test server's own user may create schemas: the store makes the one it is given.
    store = await PostgresMemory.connect(pg_config)
    try:
        assert await store.count_history("s") == 0
    finally:
        await store.close()
