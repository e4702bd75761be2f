"""The ``aalis`` command itself, run as a user runs it, beside hostile plugins and URIs.

Every command is a real process (``aalis`` from this environment) with a throw-away plugin
installed as a distribution on ``PYTHONPATH``; ``subprocess``'s own timeout is the proof
that a command ends. Secrets are checked in everything the process prints, logs included.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

AALIS = str(Path(sys.executable).with_name("aalis"))
# Small limits for what the hostile plugins do, a generous start limit: a loaded CI machine
# must not time out memory-sqlite's own start.
LIMITS = "start_timeout = 20\nstop_timeout = 0.5\nhook_timeout = 0.5\n"
START_LIMITS = "start_timeout = 2\nstop_timeout = 0.5\nhook_timeout = 0.5\n"

HOSTILE_PLUGINS = """
import asyncio, sys
from aalis_core import Plugin, hookimpl

async def forever():
    await asyncio.Event().wait()

class HangsStart(Plugin):
    name = "rel-cli-hangs-start"
    async def start(self, ctx):
        await forever()

class HangsStop(Plugin):
    name = "rel-cli-hangs-stop"
    async def stop(self):
        await forever()

class HangsMiddleware(Plugin):
    name = "rel-cli-hangs-middleware"
    @hookimpl
    async def memory_clear(self, request, call_next):
        await forever()

class ExitsListener(Plugin):
    name = "rel-cli-exits-listener"
    @hookimpl
    async def history_changed(self, session_id):
        sys.exit(3)

class ForgetsAwait(Plugin):
    name = "rel-cli-short-circuits"
    @hookimpl
    async def memory_clear(self, request, call_next):
        return None  # never calls call_next: the history is not cleared
"""

ENTRY_POINTS = {
    "rel-cli-hangs-start": "HangsStart",
    "rel-cli-hangs-stop": "HangsStop",
    "rel-cli-hangs-middleware": "HangsMiddleware",
    "rel-cli-exits-listener": "ExitsListener",
    "rel-cli-short-circuits": "ForgetsAwait",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the hostile plugins as one installed distribution."""
    folder = tmp_path_factory.mktemp("site")
    (folder / "aalis_rel_cli_hostile.py").write_text(HOSTILE_PLUGINS, encoding="utf-8")
    dist = folder / "aalis_rel_cli_hostile-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: aalis-rel-cli-hostile\nVersion: 0.1.0\n", encoding="utf-8"
    )
    lines = [f"{name} = aalis_rel_cli_hostile:{cls}" for name, cls in ENTRY_POINTS.items()]
    (dist / "entry_points.txt").write_text(
        "[aalis.plugins]\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    return folder


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def aalis(tmp_path: Path, site: Path) -> Run:
    """``aalis(*args, plugins=..., config=..., env=...)``: one real ``aalis`` process."""

    def run(
        *args: str,
        plugins: str = "memory-sqlite,memory-cli",
        config: str = "",
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        timeout: float = 30,
        limits: str = LIMITS,
    ) -> subprocess.CompletedProcess[str]:
        (tmp_path / "aalis.toml").write_text(
            f'[host]\ndata_dir = "data"\n{limits}{config}', encoding="utf-8"
        )
        environ = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
            "AALIS_CONFIG": str(tmp_path / "aalis.toml"),
            "AALIS_LOAD_PLUGINS": plugins,
            **(env or {}),
        }
        environ.pop("AALIS_DEBUG", None)
        return subprocess.run(
            [AALIS, *args],
            cwd=tmp_path,
            env=environ,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


# -- hanging and exiting plugins -------------------------------------------------------------


def test_a_plugin_hanging_in_start_or_stop_does_not_hang_any_command(aalis: Run) -> None:
    plugins = "memory-sqlite,memory-cli,rel-cli-hangs-start,rel-cli-hangs-stop"
    listing = aalis("plugins", "--json", plugins=plugins, timeout=20, limits=START_LIMITS)
    assert listing.returncode == 0, listing.stderr
    rows = {row["name"]: row for row in json.loads(listing.stdout)}
    assert rows["rel-cli-hangs-start"]["state"] == "error"
    assert "start timed out after 2 s" in rows["rel-cli-hangs-start"]["error"]
    assert "rel-cli-hangs-stop" in listing.stderr  # the abandoned stop is logged, named
    history = aalis("history", "s1", plugins=plugins, timeout=20, limits=START_LIMITS)
    assert history.returncode == 0, history.stderr


def test_a_hanging_middleware_ends_the_clear_with_a_row_naming_it(aalis: Run) -> None:
    plugins = "memory-sqlite,memory-cli,rel-cli-hangs-middleware"
    result = aalis("clear", "--session", "s1", plugins=plugins, timeout=20)
    assert "FAILED -: timed out after 0.5 s [rel-cli-hangs-middleware]" in result.stdout
    assert "ok     context" in result.stdout  # the chain went on: the history is cleared
    assert result.returncode == 1
    everything = aalis("clear", "--all", "--yes", plugins=plugins, timeout=20)
    assert "[rel-cli-hangs-middleware]" in everything.stdout
    assert everything.returncode == 1


def test_system_exit_in_a_listener_does_not_end_the_clear(aalis: Run) -> None:
    plugins = "memory-sqlite,memory-cli,rel-cli-exits-listener"
    result = aalis("clear", "--session", "s1", plugins=plugins, timeout=20)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "ok     context" in result.stdout
    assert "rel-cli-exits-listener" in result.stderr
    assert "SystemExit" in result.stderr


def test_clear_says_when_the_history_was_not_cleared(aalis: Run) -> None:
    plugins = "memory-sqlite,memory-cli,rel-cli-short-circuits"
    result = aalis("clear", "--session", "s1", plugins=plugins, timeout=20)
    assert result.returncode == 1
    assert "history was NOT cleared" in result.stderr


# -- hostile MongoDB URIs --------------------------------------------------------------------

SECRET = "S3cr3tT0ken-4711"
HOSTILE_URIS = [
    "mongodb://app:pw-{s}@127.0.0.1:1/aalis?authMechanism=MONGODB-AWS"
    "&authMechanismProperties=AWS_SESSION_TOKEN:{s}",
    "mongodb://127.0.0.1:1/aalis?tls=true&tlsCertificateKeyFilePassword={s}",
]


@pytest.mark.parametrize("uri", HOSTILE_URIS)
def test_hostile_mongodb_uris_never_print_a_secret(aalis: Run, uri: str) -> None:
    """``plugins``, ``plugins --json``, a failing command and debug logs: no secret anywhere."""
    pytest.importorskip("aalis_plugin_memory_mongodb", reason="memory-mongodb is not installed")
    config = textwrap.dedent(
        """\
        [plugins.memory-mongodb]
        uri = "${AALIS_REL_URI}"
        server_selection_timeout_ms = 300
        connect_timeout_ms = 300
        """
    )
    env = {"AALIS_REL_URI": uri.format(s=SECRET)}
    plugins = "memory-mongodb,memory-sqlite,memory-cli"
    run = functools.partial(aalis, plugins=plugins, limits="start_timeout = 20\n")
    table = run("plugins", config=config, env=env)
    listing = run("plugins", "--json", config=config, env=env)
    rows = {row["name"]: row for row in json.loads(listing.stdout)}
    assert rows["memory-mongodb"]["state"] == "error"  # nothing listens on port 1
    assert "cannot reach" in rows["memory-mongodb"]["error"]
    pinned = config + '[capabilities.memory]\nprovider = "memory-mongodb"\n'
    failing = run("history", "s1", config=pinned, env=env)
    assert failing.returncode != 0
    debug = run("history", "s1", config=config, env={**env, "AALIS_LOG_LEVEL": "debug"})
    bad_key = run(  # a secret put under the wrong key: the validator names the key only
        "plugins",
        config=config.replace("uri =", 'database = "${AALIS_REL_URI}"\nuri ='),
        env=env,
    )
    outputs = [table, listing, failing, debug, bad_key]
    for result in outputs:
        assert SECRET not in result.stdout + result.stderr, result.args
    assert "mongodb://" in table.stdout + table.stderr  # the URI is shown, redacted
    assert "database" in bad_key.stdout
