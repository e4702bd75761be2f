"""The `aalis` CLI: version, init, plugins, plugin commands, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from aalis_core import Host
from aalis_core._cli import AalisGroup, cli, load_plugin_commands, main

CMD_PLUGIN = """
import click
from aalis_core import Capability, Plugin, hookimpl
from aalis_core._cli import open_host, run_async

thing = Capability("t-thing", object)
STARTED = []

class Cmd(Plugin):
    name = "t-cmd"

    async def start(self, ctx):
        STARTED.append(self.name)

    @hookimpl
    def register_commands(self, cli):
        @cli.command()
        def hello():
            "Say hello through a capability nobody provides."
            async def go():
                async with open_host() as host:
                    return host.capability(thing).use
            run_async(go())

class Breaks(Plugin):
    name = "t-breaks"

    @hookimpl
    def register_commands(self, cli):
        raise RuntimeError("cannot register")
"""


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory without aalis.toml; only throwaway plugins are loaded."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("AALIS_CONFIG", raising=False)
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "t-cmd,t-breaks")
    return work


@pytest.fixture
def cmd_dist(dists: Any) -> Any:
    dists.module("t_cmd_mod", CMD_PLUGIN)
    dists.dist(
        "t-cmd-dist", "2.0", plugins={"t-cmd": "t_cmd_mod:Cmd", "t-breaks": "t_cmd_mod:Breaks"}
    )
    return dists


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_version(isolated: Path) -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("aalis, version ")


def test_init_writes_valid_commented_config_and_refuses_overwrite(isolated: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["init"])
    assert result.exit_code == 0, result.output
    path = isolated / "aalis.toml"
    text = path.read_text()
    assert text.startswith("#")
    assert "[capabilities.memory]" in text
    Host.from_config(path)  # the written file is a valid configuration

    path.write_text("# mine\n")
    result = runner.invoke(cli, ["init"])
    assert result.exit_code == 1
    assert "already exists" in one_line(result.stderr)
    assert path.read_text() == "# mine\n"

    result = runner.invoke(cli, ["init", "--force"])
    assert result.exit_code == 0
    assert path.read_text() == text


def test_plugins_json_and_table(isolated: Path, cmd_dist: Any) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["t-cmd"] == {
        "name": "t-cmd",
        "version": "2.0",
        "state": "active",
        "error": None,
        "provides": [],
        "bindings": {},
    }
    result = runner.invoke(cli, ["plugins"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].split() == [
        "NAME",
        "VERSION",
        "STATE",
        "PROVIDES",
        "BINDINGS",
        "ERROR",
    ]
    assert any(line.startswith("t-cmd ") for line in result.stdout.splitlines())


def test_config_error_is_one_line_exit_1(isolated: Path) -> None:
    bad = isolated / "bad.toml"
    bad.write_text("[host]\nlog_levle = 'info'\n")
    result = CliRunner().invoke(cli, ["plugins"], env={"AALIS_CONFIG": str(bad)})
    assert result.exit_code == 1
    line = one_line(result.stderr)
    assert line.startswith("Error: ")
    assert str(bad) in line
    assert "[host] key 'log_levle'" in line


def test_plugin_commands_join_without_starting_plugins(isolated: Path, cmd_dist: Any) -> None:
    group = AalisGroup(name="aalis")
    registered = load_plugin_commands(group)
    assert registered == ["t-cmd"]  # t-breaks raised and was skipped
    assert "hello" in group.commands
    assert sys.modules["t_cmd_mod"].STARTED == []


def test_run_async_turns_capability_absent_into_one_line(
    isolated: Path, cmd_dist: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "t-cmd")  # t-breaks would log a warning line
    group = AalisGroup(name="aalis")
    result = CliRunner().invoke(group, ["hello"])
    assert result.exit_code == 1
    line = one_line(result.stderr)
    assert line == (
        "Error: capability 't-thing' is not present for consumer 'cli' (no active provider)"
    )
    assert sys.modules["t_cmd_mod"].STARTED == ["t-cmd"]  # the command started the host


def test_main_turns_unexpected_errors_into_one_line(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    @cli.command("t-explode", hidden=True)
    def explode() -> None:
        raise KeyError("api_key=sk-abcdefghijklmnop")

    try:
        with pytest.raises(SystemExit) as exit_info:
            main(["t-explode"])
    finally:
        cli.commands.pop("t-explode")
    assert exit_info.value.code == 1
    line = one_line(capsys.readouterr().err)
    assert "abcdefghijklmnop" not in line
    assert line.startswith("Error: ")


def test_usage_errors_stay_clicks(isolated: Path) -> None:
    result = CliRunner().invoke(cli, ["plugins", "--nope"])
    assert result.exit_code == 2
    assert "No such option" in result.stderr


def _aalis() -> str:
    script = Path(sys.executable).with_name("aalis")
    if not script.exists():
        pytest.skip("the aalis console script is not installed in this environment")
    return str(script)


def test_real_console_script(isolated: Path, cmd_dist: Any) -> None:
    env = {**os.environ, "PYTHONPATH": str(cmd_dist.root), "AALIS_LOAD_PLUGINS": "t-cmd"}
    version = subprocess.run(
        [_aalis(), "--version"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("aalis, version ")

    listing = subprocess.run(
        [_aalis(), "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert listing.returncode == 0, listing.stderr
    assert {row["name"]: row["state"] for row in json.loads(listing.stdout)}["t-cmd"] == "active"

    failing = subprocess.run(
        [_aalis(), "hello"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert failing.returncode == 1
    assert one_line(failing.stderr).startswith("Error: capability 't-thing' is not present")

    bad = isolated / "bad.toml"
    bad.write_text("[plugins.nothing-installed]\n")
    broken = subprocess.run(
        [_aalis(), "plugins"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**env, "AALIS_CONFIG": str(bad)},
    )
    assert broken.returncode == 1
    assert "no installed plugin is named 'nothing-installed'" in one_line(broken.stderr)


def test_help_lists_core_commands(isolated: Path) -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "init" in result.output
    assert "plugins" in result.output
    assert isinstance(cli, click.Group)


def test_plugin_commands_follow_a_changed_plugin_selection(
    isolated: Path, cmd_dist: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One group object, two selections: commands of a plugin filtered out go away and come back."""
    group = AalisGroup(name="aalis")
    ctx = click.Context(group)
    assert "hello" in group.list_commands(ctx)
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "t-breaks")
    assert "hello" not in group.list_commands(ctx)
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "t-cmd")
    assert "hello" in group.list_commands(ctx)
