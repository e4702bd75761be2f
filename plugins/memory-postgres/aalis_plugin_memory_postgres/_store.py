"""``PostgresMemory``: the ``MemoryService`` on PostgreSQL, every optional method included.

The contract's methods come from ``CompleteMemoryBackend`` (aalis_api_memory._backend), which
validates and normalises every argument before anything is sent (bad input raises and changes
nothing, as on every backend); the storage methods here encode and run on a connection borrowed
from a psycopg ``AsyncConnectionPool``.

Transactions. Connections are in autocommit mode, so a single statement is its own transaction
and costs one round trip: ``save_message`` is one statement (a data-modifying CTE that bumps the
session's counters and inserts the row), as are ``get_history`` and ``count_history``. Writes
that read before they change (``archive_span``, ``delete_messages_by_timestamps``,
``update_message_content``, ``clear_session``) and ``commit_metadata`` run in an explicit
transaction: all or nothing, on any number of processes and hosts.

Several writers. Every write to a session first locks that session's ``session_stats`` row
(``save_message`` through its upsert, the others with ``SELECT ... FOR UPDATE``). Writers of one
session therefore take turns, whichever process or host they run in, and each statement after
the lock sees everything committed before it (READ COMMITTED takes a fresh snapshot per
statement): an ``archive_span`` counts positions on the list as it is once it holds the lock,
and the counters never drift from the rows. The insertion sequence is an identity column, so
it is unique and increasing across processes; each writer's own saves keep their order.

Message ids. Every message's id is in the ``id`` column, under a unique index, and in its JSON
text (what reads return). A stored id makes the save's statement or the import's transaction
fail whole, raised as ``MessageIdConflict`` (docs/backends/postgres.md, "Message ids").
"""

from __future__ import annotations

import asyncio
from typing import Any

from aalis_api_memory import BackendUnavailable, StoreClosed
from psycopg_pool import AsyncConnectionPool

from aalis_plugin_memory_postgres._base import PostgresBase
from aalis_plugin_memory_postgres._config import PostgresConfig
from aalis_plugin_memory_postgres._exact import PostgresExact
from aalis_plugin_memory_postgres._history import PostgresHistory
from aalis_plugin_memory_postgres._identity import PostgresIdentity
from aalis_plugin_memory_postgres._leases import PostgresLeases
from aalis_plugin_memory_postgres._metadata import PostgresMetadata
from aalis_plugin_memory_postgres._queries import PostgresQueries
from aalis_plugin_memory_postgres._redaction import Redactor
from aalis_plugin_memory_postgres._schema import migrate
from aalis_plugin_memory_postgres._transfer import PostgresTransfer


class PostgresUnavailable(BackendUnavailable):
    """The server cannot be reached or its schema cannot be prepared (URI redacted)."""


class PostgresMemory(
    PostgresHistory,
    PostgresQueries,
    PostgresIdentity,
    PostgresTransfer,
    PostgresExact,
    PostgresMetadata,
    PostgresLeases,
    PostgresBase,
):
    """Per-session history and metadata in one PostgreSQL schema, shared by any number of hosts.

    ``await PostgresMemory.connect(PostgresConfig(uri=...))`` opens the pool and creates or
    migrates the schema; ``await store.close()`` closes the pool. Arguments are checked by
    ``CompleteMemoryBackend``; each group of storage methods is a mixin of its own module
    (``history.py``, ``queries.py``, ``identity.py``, ``transfer.py``, ``exact.py``,
    ``metadata.py``, ``leases.py``) over the shared state of ``base.py``.
    """

    @classmethod
    async def connect(cls, config: PostgresConfig, *, logger: Any = None) -> PostgresMemory:
        """Open a pool on ``config.uri`` and prepare the schema.

        Fails with one ``PostgresUnavailable`` (URI redacted) after about
        ``connect_timeout_s`` when the server cannot be reached, and when it refuses the
        schema. Migrating is not bounded by that timeout: a migration of a large table (or
        another host's, which this one waits for) may take minutes, and giving up would roll
        it back only to start it again at the next start.
        """
        if config.uri is None:
            raise ValueError("PostgresConfig.uri is not set")
        redactor = Redactor(config.uri)
        timeout = float(config.connect_timeout_s)
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            config.uri,
            min_size=config.min_pool_size,
            max_size=config.max_pool_size,
            kwargs={
                "autocommit": True,
                "connect_timeout": config.connect_timeout_s,
                "application_name": "aalis-memory-postgres",
            },
            timeout=timeout,
            name="aalis-memory-postgres",
            open=False,
        )
        where = f"{redactor.display} (schema {config.schema!r})"
        step = "connect"
        try:
            async with asyncio.timeout(timeout + 1):
                await pool.open(wait=config.min_pool_size > 0, timeout=timeout)
                conn = await pool.getconn(timeout=timeout)
            step = "schema"
            try:
                await migrate(conn, config.schema)
            finally:
                await pool.putconn(conn)
        except Exception as exc:  # any failure here means "this server is not usable"
            await pool.close()
            what = "cannot reach PostgreSQL" if step == "connect" else "cannot prepare the schema"
            reason = redactor(f"{type(exc).__name__}: {exc}".strip())
            raise PostgresUnavailable(f"{what} at {where}: {reason}") from None
        except BaseException:
            await pool.close()
            raise
        return cls(pool, config, logger=logger)

    def __repr__(self) -> str:
        state = "open" if self._pool is not None else "closed"
        return f"PostgresMemory({self._redactor.display!r}, schema={self.schema!r}, {state})"

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> PostgresMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = ["PostgresMemory", "PostgresUnavailable", "StoreClosed"]
