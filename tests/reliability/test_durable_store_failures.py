"""A broken embedded SQLite store never turns into a volatile one (docs/host/providers.md).

Each cause seen in the field is set up under a temporary working directory with no
``aalis.toml`` (the embedded default: SQLite at ``.aalis/aalis.db``), then the real ``aalis``
console script runs as a subprocess. Every command that needs the store must exit non-zero
with one ``Error:`` line that names memory-sqlite and the cause, and nothing may be written
anywhere: the directory tree is compared byte for byte before and after.

How the causes are made:

- *read-only directory*: ``.aalis`` is mode 0555 (empty, or holding a good database). Root
  ignores file modes, so when the tests run as root the command runs under util-linux's
  ``setpriv`` with the capabilities that bypass them (``CAP_DAC_OVERRIDE``...) dropped.
- *disk full at creation*: the subprocess runs with ``RLIMIT_FSIZE`` of 1 KiB (and SIGXFSZ
  ignored, so a write past it fails with EFBIG instead of killing the process). SQLite
  reports that as "database or disk is full", exactly as on a full disk; it is honest in
  that the file system really refuses the write, and it needs no mount privileges that a
  container or CI runner may not grant.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

BIN = Path(sys.executable).parent


def tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` with a digest of its content (or its kind)."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "symlink"
        elif path.is_dir():
            found[rel] = "dir"
        else:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "work"
    path.mkdir()
    yield path
    for sub in [path, *path.rglob("*")]:
        if sub.is_dir() and not sub.is_symlink():
            os.chmod(sub, 0o755)


@attrs.frozen
class Launch:
    """How a cause runs the command: a wrapper in front of it, a hook in the child."""

    prefix: tuple[str, ...] = ()
    preexec: Callable[[], None] | None = None


def run_aalis(cwd: Path, *args: str, launch: Launch = Launch()) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
    env["AALIS_LOG_LEVEL"] = "critical"  # the one Error: line is what the user reads
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [*launch.prefix, str(BIN / "aalis"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=launch.preexec,
    )


def make_db(path: Path, rows: int = 0) -> None:
    """A real memory-sqlite database with ``rows`` messages in session ``s``."""
    from aalis_plugin_memory_sqlite._schema import connect

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for i in range(rows):
            conn.execute(
                "INSERT INTO messages(session_id, seq, timestamp, control, role, data) "
                "VALUES ('s', ?, ?, 0, 'user', ?)",
                (i + 1, i, '{"role":"user","content":"' + "x" * 200 + '"}'),
            )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def not_a_database(root: Path) -> Launch:
    (root / ".aalis").mkdir()
    (root / ".aalis" / "aalis.db").write_bytes(b"these are my notes, not a database\n" * 200)
    return Launch()


def truncated(root: Path) -> Launch:
    db = root / ".aalis" / "aalis.db"
    make_db(db, rows=400)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    return Launch()


def newer_schema(root: Path) -> Launch:
    db = root / ".aalis" / "aalis.db"
    make_db(db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    return Launch()


def _without_root_privileges() -> Launch:
    if os.geteuid() != 0:
        return Launch()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without util-linux setpriv: file modes cannot bind")
    dropped = "-dac_override,-dac_read_search,-fowner"
    return Launch((setpriv, f"--bounding-set={dropped}", f"--inh-caps={dropped}"))


def read_only_directory(root: Path) -> Launch:
    (root / ".aalis").mkdir()
    os.chmod(root / ".aalis", 0o555)
    return _without_root_privileges()


def read_only_directory_with_a_database(root: Path) -> Launch:
    make_db(root / ".aalis" / "aalis.db", rows=3)
    os.chmod(root / ".aalis" / "aalis.db", 0o444)
    os.chmod(root / ".aalis", 0o555)
    return _without_root_privileges()


def data_dir_is_a_file(root: Path) -> Launch:
    (root / ".aalis").write_text("not a directory\n", encoding="utf-8")
    return Launch()


def disk_full(root: Path) -> Launch:
    def tiny_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    return Launch(preexec=tiny_disk)


CAUSES: dict[str, tuple[Callable[[Path], Launch], str]] = {
    "not-a-database": (not_a_database, "not a database"),
    "truncated": (truncated, "malformed"),
    "newer-schema": (newer_schema, "schema version 99"),
    "read-only-directory": (read_only_directory, "permission denied"),
    "read-only-directory-with-a-database": (read_only_directory_with_a_database, "readonly"),
    "data-dir-is-a-file": (data_dir_is_a_file, "not a directory"),
    # EFBIG from the size limit is SQLite's SQLITE_IOERR_WRITE; ENOSPC would be SQLITE_FULL
    "disk-full": (disk_full, "disk I/O error (SQLITE_IOERR_WRITE)"),
}


def check_refused(result: subprocess.CompletedProcess[str], cause: str) -> None:
    assert result.returncode != 0, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, result.stderr
    line = errors[0].lower()
    assert line.startswith("error:"), line
    assert "memory-sqlite" in line, line
    assert cause.lower() in line, line
    assert "inmemory" not in result.stdout


@pytest.mark.parametrize("name", list(CAUSES))
def test_broken_store_is_named_and_nothing_lands_anywhere(workdir: Path, name: str) -> None:
    setup, cause = CAUSES[name]
    launch = setup(workdir)
    export = workdir / "export.jsonl"
    export.write_text(
        '{"format":"aalis-memory-export","version":1}\n'
        '{"session_id":"s","archived":false,"message":{"role":"user","content":"hi","timestamp":1}}\n',
        encoding="utf-8",
    )
    (workdir / "script.txt").write_text("remember this\n", encoding="utf-8")
    before = tree(workdir)
    commands: list[tuple[str, ...]] = [
        ("sessions",),
        ("chat", "--script", "script.txt"),
        ("import", "export.jsonl"),
    ]
    if name == "not-a-database":  # every other command that needs the store, once
        commands += [
            ("history", "s"),
            ("export", "--all", "-o", "out.jsonl"),
            ("clear", "--all", "--yes"),
            ("metadata", "list"),
        ]
    for command in commands:
        result = run_aalis(workdir, *command, launch=launch)
        check_refused(result, cause)
        assert "chat in session" not in result.stdout  # refused before the banner
    assert tree(workdir) == before


def test_plugins_shows_the_failure_and_the_cli_binding(workdir: Path) -> None:
    not_a_database(workdir)
    result = run_aalis(workdir, "plugins")
    assert result.returncode == 0, result.stderr
    sqlite_row = next(
        line for line in result.stdout.splitlines() if line.startswith("memory-sqlite")
    )
    assert "error" in sqlite_row
    assert "not a database" in sqlite_row
    assert "consumer 'cli'" in result.stdout
    assert "memory=-" in result.stdout.split("consumer 'cli'")[1]


def test_the_healthy_default_still_works_and_the_banner_names_the_store(workdir: Path) -> None:
    (workdir / "script.txt").write_text("remember this\n", encoding="utf-8")
    result = run_aalis(workdir, "chat", "--script", "script.txt")
    assert result.returncode == 0, result.stderr
    assert "history in memory-sqlite (" in result.stdout
    assert "aalis.db" in result.stdout
    result = run_aalis(workdir, "sessions")
    assert result.returncode == 0, result.stderr
    assert "cli" in result.stdout
