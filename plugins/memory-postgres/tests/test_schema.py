"""Versioned migrations: recorded, applied once under concurrency, a newer schema refused."""

from __future__ import annotations

import asyncio
import math

import attrs
import psycopg
import pytest
from aalis_api_memory import MessageIdConflict
from aalis_plugin_memory_postgres import PostgresConfig, PostgresMemory, PostgresUnavailable
from aalis_plugin_memory_postgres._codec import encode_message
from aalis_plugin_memory_postgres._schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    _lock_key,
    migrate,
    quote_schema,
)
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


# -- message ids for data written before they existed (migration 0002) --------------------


async def _old_store(config: PostgresConfig) -> None:
    """The schema at version 1 with messages as that version wrote them: no id anywhere."""
    schema = quote_schema(config.schema)
    assert config.uri is not None
    async with await psycopg.AsyncConnection.connect(config.uri, autocommit=True) as conn:
        assert await migrate(conn, config.schema, target=1) == 1
        rows = [
            ("s", Message(role="user", content="first", timestamp=1), True),
            ("s", Message(role="assistant", content="second", timestamp=1), False),
            ("s", Message(role="user", content="third", timestamp=2), False),
            ("t", Message(role="user", content="elsewhere", timestamp=1), False),
        ]
        for sid, message, archived in rows:
            ts = message.timestamp
            assert ts is not None
            assert "id" not in message.to_json()
            await conn.execute(
                f"INSERT INTO {schema}.messages (session_id, ts, archived, control, role, data)"
                " VALUES (%s, %s, %s, false, %s, %s)",
                (sid, message.timestamp, archived, message.role, encode_message(message, ts)),
            )
        # A row damaged by hand: reads skip it; the migration must not trip on it.
        await conn.execute(
            f"INSERT INTO {schema}.messages (session_id, ts, control, role, data)"
            " VALUES ('s', 3, false, 'user', 'not json')"
        )
        await conn.execute(
            f"INSERT INTO {schema}.session_stats VALUES ('s', 3, 3, 1, 3), ('t', 1, 1, 0, 1)"
        )


async def _ids(store: PostgresMemory, session_id: str) -> list[str | None]:
    return [m.id for m in await store.get_full_history(session_id, math.inf)]


async def test_messages_stored_before_ids_get_them_once_and_keep_them(
    pg_config: PostgresConfig,
) -> None:
    await _old_store(pg_config)
    # Several hosts upgrading at once: the migration runs once, under the advisory lock.
    stores = await asyncio.gather(*(PostgresMemory.connect(pg_config) for _ in range(4)))
    try:
        assert await _versions(stores[0]) == [(i + 1, n) for i, (n, _s) in enumerate(MIGRATIONS)]
        ids = await _ids(stores[0], "s")
        assert len(ids) == 3
        assert all(isinstance(i, str) and i for i in ids)
        [other] = await _ids(stores[0], "t")
        assert len({*ids, other}) == 4
        # Every read, every host: the same ids.
        for store in stores:
            assert await _ids(store, "s") == ids
            assert [m.id for m in await store.get_history("s")] == ids[1:]
            assert [r.message.id for r in await store.export_session("s")] == ids
            assert (await store.history_snapshot("s")).messages[0].id == ids[1]
    finally:
        await asyncio.gather(*(s.close() for s in stores))
    store = await PostgresMemory.connect(pg_config)
    try:
        assert await _ids(store, "s") == ids  # after reopening
        found = await store.get_messages_by_ids([ids[0], other, ids[2]])
        assert [(r.session_id, r.message.content, r.archived) for r in found] == [
            ("s", "first", True),
            ("t", "elsewhere", False),
            ("s", "third", False),
        ]
        with pytest.raises(MessageIdConflict):
            await store.save_message("u", Message(role="user", content="x", id=ids[1]))
        assert await store.delete_messages_by_ids("s", [ids[1], other]) == 1
        assert [m.content for m in await store.get_full_history("s", math.inf)] == [
            "first",
            "third",
        ]
        assert await store.count_history("s") == 2  # "third", and the damaged row: still a row
        assert await store.get_messages_by_ids([ids[1]]) == []
    finally:
        await store.close()


async def test_a_host_waits_for_a_migration_longer_than_the_connect_timeout(
    pg_config: PostgresConfig,
) -> None:
    # Another host migrating a large table holds the schema's lock for longer than
    # connect_timeout_s: this host must wait for it and start, not give up (and retry the
    # same wait at every restart). connect_timeout_s bounds reaching the server only.
    config = attrs.evolve(pg_config, connect_timeout_s=1)
    assert config.uri is not None
    async with (
        await psycopg.AsyncConnection.connect(config.uri, autocommit=True) as other,
        other.transaction(),
    ):
        await other.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(config.schema),))
        starting = asyncio.create_task(PostgresMemory.connect(config))
        await asyncio.sleep(2.5)
        assert not starting.done()
    store = await asyncio.wait_for(starting, 10)
    try:
        assert await _versions(store) == [(i + 1, n) for i, (n, _s) in enumerate(MIGRATIONS)]
    finally:
        await store.close()
