"""A MongoDB for tests and benchmarks: ``$AALIS_TEST_MONGODB_URI``, else nx-27017 on loopback.

Every suite that runs a backend on MongoDB (memory-mongodb's, memory-summary's, the reliability
suite, the CLI transfer tests) and the MongoDB benchmarks need the same server, and test helpers
cannot be imported across test directories under ``--import-mode=importlib``. So the launcher
lives in this unpublished distribution, and the fixtures that use it (``fixtures.py``) are thin
wrappers.

nx-27017 (pinned in this distribution's ``mongodb`` extra) is a MongoDB wire-protocol server on SQLite:
``wire_server`` starts it on a free loopback port, waits until it answers a ping and stops it at
the end, so running the tests needs no MongoDB installed. With ``AALIS_TEST_MONGODB_URI`` set,
that server is used instead and nothing is started.

pymongo is imported inside the functions that talk to a server: importing this module (or the
pytest plugin, ``fixtures.py``) stays cheap, and a caller that only asks whether a server is
available pays nothing.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import attrs
from aalis_api_memory import BackendUnavailable

from aalis_core import UriRedactor as Redactor

ENV_URI = "AALIS_TEST_MONGODB_URI"
STARTUP_SECONDS = 30
# The free port is found by binding and releasing it, so another process may take it before
# nx-27017 binds; a fresh port usually wins the second time.
_PORT_ATTEMPTS = 3
_CLIENT_TIMEOUT_MS = 5000

NX = "nx-27017"
EXTERNAL = "external"
_LABELS = {
    NX: "nx-27017 (MongoDB wire-protocol server on SQLite, started on loopback)",
    EXTERNAL: "external",
}


class ServerUnavailable(BackendUnavailable):
    """Neither ``$AALIS_TEST_MONGODB_URI`` nor nx-27017: a test suite skips, a benchmark stops."""


@attrs.frozen
class TestServer:
    """Where the MongoDB is: ``uri``, a ``database`` of the run's own, and what ``kind`` it is.

    ``database`` is unique per ``wire_server`` and, on an external server, dropped at the end;
    callers that make a database per test may ignore it. ``storage`` says where nx-27017 keeps
    its data (``None`` for an external server), because benchmark figures depend on it.
    """

    __test__ = False  # not a test class, despite the name

    uri: str
    database: str
    kind: str  # NX or EXTERNAL
    storage: str | None = None

    def with_options(self, **options: str | int | bool) -> str:
        """``uri`` with these query options appended (the caller avoids ones it already has)."""
        if not options:
            return self.uri
        query = "&".join(f"{key}={_option(value)}" for key, value in options.items())
        rest = self.uri.partition("://")[2]
        if "?" in rest:
            join = "&"
        elif "/" in rest:
            join = "?"
        else:
            join = "/?"
        return f"{self.uri}{join}{query}"

    def describe(self) -> dict[str, Any]:
        """The server as a report records it: kind, redacted URI, versions; never a password.

        Asks the server for ``buildInfo``; a server without it is still described.
        """
        description: dict[str, Any] = {
            "kind": _LABELS.get(self.kind, self.kind),
            "uri": Redactor(self.uri).display,
        }
        if self.kind == NX:
            description[NX] = _version(NX)
            description["storage"] = self.storage
        description.update(_build_info(self.uri))
        return description


def _option(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return quote(str(value), safe="")


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _client(uri: str, timeout_ms: int = _CLIENT_TIMEOUT_MS) -> Any:
    from pymongo import MongoClient

    return MongoClient(uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms)


def _build_info(uri: str) -> dict[str, Any]:
    client = _client(uri)
    try:
        info = client.admin.command("buildInfo")
        return {"reported_version": info.get("version")}
    except Exception as exc:  # a server that lacks buildInfo still serves
        return {"reported_version": None, "build_info_error": str(exc)[:200]}
    finally:
        client.close()


def drop_database(uri: str, database: str) -> None:
    """Drop ``database`` on the server at ``uri`` (nothing happens when it does not exist)."""
    client = _client(uri)
    try:
        client.drop_database(database)
    finally:
        client.close()


def nx_command() -> list[str] | None:
    """How to run nx-27017 from this environment, or None when it is not installed."""
    script = Path(sys.executable).with_name(NX)
    if script.exists():
        return [str(script)]
    found = shutil.which(NX)
    if found:
        return [found]
    if importlib.util.find_spec("nx_27017") is not None:
        return [
            sys.executable,
            "-c",
            "import sys; from nx_27017.nx_27017 import main; sys.exit(main())",
        ]
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pings(uri: str, timeout_ms: int = 500) -> bool:
    from pymongo.errors import PyMongoError

    client = _client(uri, timeout_ms)
    try:
        client.admin.command("ping")
        return True
    except PyMongoError:
        return False
    finally:
        client.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def unavailable() -> str | None:
    """Why ``wire_server`` cannot give a server here (a test suite's skip reason), or None."""
    if os.environ.get(ENV_URI) or nx_command() is not None:
        return None
    return f"no MongoDB: {NX} is not installed and {ENV_URI} is unset"


def _start_nx(workdir: Path, in_memory: bool) -> tuple[subprocess.Popen[bytes], str, str]:
    """Start nx-27017 under ``workdir``; return the process, its URI and its storage."""
    command = nx_command()
    if command is None:
        raise ServerUnavailable(unavailable())
    if in_memory:
        data_dir, storage = "memory", "in-memory, one SQLite database per database"
    else:
        # One SQLite file per database, as a deployment would keep it.
        (workdir / "nx-data").mkdir(exist_ok=True)
        data_dir, storage = str(workdir / "nx-data"), "one SQLite file per database"
    out_path = workdir / f"{NX}.out"
    for _attempt in range(_PORT_ATTEMPTS):
        port = _free_port()
        with out_path.open("ab") as out:
            proc = subprocess.Popen(
                [
                    *command,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--data-dir",
                    data_dir,
                    "--pid-file",
                    str(workdir / f"{NX}.pid"),
                    "--log-file",
                    str(workdir / f"{NX}.log"),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=workdir,
            )
        uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if proc.poll() is not None:  # most likely the port was taken: try another
                break
            if _pings(uri):
                return proc, uri, storage
            time.sleep(0.1)
        _stop(proc)
    output = out_path.read_text(errors="replace")[-2000:]
    raise RuntimeError(
        f"{NX} did not answer a ping within {STARTUP_SECONDS} s "
        f"({_PORT_ATTEMPTS} attempts; log {workdir / f'{NX}.log'}):\n{output}"
    )


@contextlib.contextmanager
def wire_server(workdir: Path, *, in_memory: bool = True) -> Iterator[TestServer]:
    """A MongoDB for the duration of the block.

    With ``$AALIS_TEST_MONGODB_URI`` set: that server, with a unique database
    (``aalis_test_<random>``) that is dropped at the end. Otherwise nx-27017 is started on a free
    loopback port with its files under ``workdir`` — in-memory databases (fast, isolated), or
    with ``in_memory=False`` one SQLite file per database (what a benchmark should measure) —
    and stopped at the end. Raises ``ServerUnavailable`` when neither exists, ``RuntimeError``
    when nx-27017 does not answer a ping within ``STARTUP_SECONDS``.
    """
    database = f"aalis_test_{uuid.uuid4().hex[:12]}"
    external = os.environ.get(ENV_URI)
    if external:
        try:
            yield TestServer(external, database, EXTERNAL)
        except BaseException:
            with contextlib.suppress(Exception):  # never hide what went wrong in the block
                drop_database(external, database)
            raise
        drop_database(external, database)
        return
    proc, uri, storage = _start_nx(workdir, in_memory)
    try:
        yield TestServer(uri, database, NX, storage)
    finally:
        _stop(proc)


__all__ = [
    "ENV_URI",
    "EXTERNAL",
    "NX",
    "STARTUP_SECONDS",
    "ServerUnavailable",
    "TestServer",
    "drop_database",
    "nx_command",
    "unavailable",
    "wire_server",
]
