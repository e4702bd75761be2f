"""Versioned migrations: recorded, applied once under concurrency, a newer schema refused."""

from __future__ import annotations

import asyncio

import pytest
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory, PostgresUnavailable
from aalis_plugin_memory_postgres.schema import MIGRATIONS, SCHEMA_VERSION, quote_schema
from aalis_schema_message import Message


async def _versions(store: PostgresMemory) -> list[tuple[int, str]]:
    async with store.pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT version, name FROM {quote_schema(store.schema)}.aalis_migrations ORDER BY 1"
        )
        return [(int(v), str(n)) for v, n in await cursor.fetchall()]


async def test_every_migration_is_recorded_by_number_and_name(memory: PostgresMemory) -> None:
    assert await _versions(memory) == [(i + 1, name) for i, (name, _s) in enumerate(MIGRATIONS)]
    assert len(MIGRATIONS) == SCHEMA_VERSION


async def test_hosts_starting_together_on_a_new_schema_migrate_it_once(
    pg_config: PostgresConfig,
) -> None:
    stores = await asyncio.gather(*(PostgresMemory.connect(pg_config) for _ in range(6)))
    try:
        assert await _versions(stores[0]) == [(i + 1, m[0]) for i, m in enumerate(MIGRATIONS)]
        await asyncio.gather(
            *(
                s.save_message("s", Message(role="user", content=str(i), timestamp=i))
                for i, s in enumerate(stores)
            )
        )
        assert await stores[0].count_history("s") == 6
    finally:
        await asyncio.gather(*(s.close() for s in stores))


async def test_reopening_keeps_the_data(pg_config: PostgresConfig) -> None:
    store = await PostgresMemory.connect(pg_config)
    await store.save_message("s", Message(role="user", content="kept", timestamp=1))
    await store.close()
    store = await PostgresMemory.connect(pg_config)
    try:
        assert [m.content for m in await store.get_history("s")] == ["kept"]
    finally:
        await store.close()


async def test_a_schema_from_a_newer_plugin_is_refused_and_left_alone(
    memory: PostgresMemory, pg_config: PostgresConfig
) -> None:
    await memory.save_message("s", Message(role="user", content="x", timestamp=1))
    async with memory.pool.connection() as conn:
        await conn.execute(
            f"INSERT INTO {quote_schema(memory.schema)}.aalis_migrations (version, name)"
            " VALUES (99, 'from_the_future')"
        )
    with pytest.raises(PostgresUnavailable, match="version 99"):
        await PostgresMemory.connect(pg_config)
    assert await memory.count_history("s") == 1


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("uri", "mysql://h/db", ValueError),
        ("uri", 5, TypeError),
        ("schema", "Bad-Name", ValueError),
        ("schema", "pg_catalog", ValueError),
        ("max_pool_size", 0, ValueError),
        ("min_pool_size", -1, ValueError),
        ("connect_timeout_s", True, TypeError),
    ],
)
def test_bad_settings_are_refused(field: str, value: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        PostgresConfig(**{field: value})


def test_a_pool_smaller_than_its_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="at least min_pool_size"):
        PostgresConfig(min_pool_size=5, max_pool_size=2)
