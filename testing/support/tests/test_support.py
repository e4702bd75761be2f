"""The test support itself: the shared fixtures give real servers, the helpers do what they say.

Every suite of the repository leans on these, so a launcher that starts nothing, or a clean-up
that drops nothing, would let whole suites pass on nothing; these tests use the real servers.
"""

from __future__ import annotations

import uuid

import pytest
from aalis_test_support.backends import BACKENDS, drop_server_data, plugin_class
from aalis_test_support.mongodb import TestServer as MongoServer
from aalis_test_support.postgres import TestServer as PostgresServer, fresh_schema, uri_as


def test_the_mongodb_fixture_is_a_server_that_answers(mongodb_server: MongoServer) -> None:
    from pymongo import MongoClient

    client: MongoClient[dict[str, object]] = MongoClient(
        mongodb_server.uri, serverSelectionTimeoutMS=5000
    )
    try:
        assert client.admin.command("ping")["ok"] == 1
    finally:
        client.close()


async def test_drop_server_data_drops_the_mongodb_database(mongodb_uri: str) -> None:
    from pymongo import MongoClient

    database = f"support_{uuid.uuid4().hex[:12]}"
    client: MongoClient[dict[str, object]] = MongoClient(mongodb_uri, serverSelectionTimeoutMS=5000)
    try:
        client[database]["things"].insert_one({"a": 1})
        assert database in client.list_database_names()
        await drop_server_data("memory-mongodb", {"uri": mongodb_uri, "database": database})
        assert database not in client.list_database_names()
    finally:
        client.close()


async def test_fresh_schema_and_drop_server_data_leave_no_schema(
    postgres_server: PostgresServer,
) -> None:
    import psycopg

    def exists(schema: str) -> bool:
        with psycopg.connect(postgres_server.uri, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s", (schema,)
            ).fetchone()
            return bool(row and row[0])

    with fresh_schema(postgres_server, "sup") as schema:
        with psycopg.connect(postgres_server.uri, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        assert exists(schema)
    assert not exists(schema)

    other = f"sup_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.uri, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{other}"')
    await drop_server_data("memory-postgres", {"uri": postgres_server.uri, "schema": other})
    assert not exists(other)


def test_uri_as_changes_only_the_credentials() -> None:
    uri = "postgresql://app:old@db.example:5432/aalis?sslmode=require"
    assert uri_as(uri, "reader", "p@ss word") == (
        "postgresql://reader:p%40ss%20word@db.example:5432/aalis?sslmode=require"
    )


def test_plugin_class_loads_by_entry_point_and_skips_what_is_missing() -> None:
    assert "memory-sqlite" in BACKENDS
    assert plugin_class("memory-inmemory").name == "memory-inmemory"
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        plugin_class("memory-does-not-exist")
