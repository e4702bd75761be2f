"""The README's commands, parsed from the README itself and checked literally.

- **Set-up and test** (section "Set up and test"): the two commands must be exactly
  ``./scripts/setup`` and ``./scripts/test``, the scripts must exist and be executable, and
  ``.ci/run`` (what CI runs on a fresh clone) must call exactly these two commands. They
  are *not* run here: running the set-up would reinstall the environment this suite runs
  in, and running the test command would run this very suite inside itself (circular, and
  twice as long). CI runs both for real, through ``.ci/run``.
- **The main job** (section "Run it"): the command is run for real, literally as written,
  in a temporary folder (with the repository's ``.venv`` and ``examples`` linked in, so the
  relative paths in the command resolve and everything it writes lands in the temporary
  folder), with no configuration: the embedded default.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _section_commands(title: str) -> list[str]:
    """Commands of the first ``sh`` block under ``## <title>`` (comments stripped)."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"README has no section '## {title}'"
    block = re.search(r"^```sh\n(.*?)^```", match.group(1), flags=re.M | re.S)
    assert block, f"README section '{title}' has no sh block"
    commands = []
    for line in block.group(1).splitlines():
        command = line.split(" #", 1)[0].strip()
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def test_setup_and_test_are_the_two_documented_commands() -> None:
    assert _section_commands("Set up and test") == ["./scripts/setup", "./scripts/test"]


def test_the_documented_scripts_exist_and_are_executable() -> None:
    for command in _section_commands("Set up and test"):
        script = ROOT / command
        assert script.is_file(), command
        assert os.access(script, os.X_OK), f"{command} is not executable"
        assert script.read_text(encoding="utf-8").startswith("#!"), f"{command} has no shebang"


def test_ci_runs_exactly_the_readme_commands() -> None:
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK)
    lines = [
        line.strip()
        for line in ci.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    commands = [line for line in lines if line.startswith("./")]
    assert commands == _section_commands("Set up and test")
    # nothing else that could run tests behind the README's back
    others = [line for line in lines if line not in commands]
    assert all(line.startswith(("set ", "cd ")) for line in others), others


def test_the_main_job_runs_as_written(
    sandbox: Path, user_env: Callable[..., dict[str, str]]
) -> None:
    (command,) = _section_commands("Run it")
    argv = shlex.split(command)
    assert argv[:2] == [".venv/bin/aalis", "chat"]
    repo_data = ROOT / ".aalis" / "aalis.db"
    before = repo_data.stat().st_mtime_ns if repo_data.exists() else None
    result = subprocess.run(
        argv, cwd=sandbox, env=user_env(), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"

    script_path = sandbox / argv[argv.index("--script") + 1]
    said = [
        line
        for line in script_path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("/")
    ]
    out = result.stdout.splitlines()
    turns = [i for i, line in enumerate(out) if line.startswith("you> ") and line[5:] in said]
    assert [out[i][5:] for i in turns] == said
    for i in turns:  # the reply right after each line; the stand-in says what it is, every time
        assert out[i + 1].startswith("assistant> ")
        assert "stand-in" in out[i + 1]
    assert "compressed:" in result.stdout  # /compress ran through memory-summary

    # the embedded default: SQLite under ./.aalis of the folder it ran in
    database = sandbox / ".aalis" / "aalis.db"
    assert database.is_file()
    with sqlite3.connect(database) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert tables, "the SQLite file holds no tables"
    # and nothing in the checkout's own data folder
    assert (repo_data.stat().st_mtime_ns if repo_data.exists() else None) == before
