"""Fixtures of the documentation tests: a sandbox folder and a way to run commands in it.

Commands run as a user who configured nothing would run them: no ``AALIS_CONFIG``, no
``AALIS_LOAD_PLUGINS``, ``.venv/bin`` first on PATH, in a temporary folder that has the
repository's ``.venv`` and ``examples`` linked in (so that commands written relative to the
repository root, like ``.venv/bin/aalis chat --script examples/chat-demo.txt``, run
literally, while everything they write lands in the temporary folder).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A temporary folder with the repository's ``.venv`` and ``examples`` linked in."""
    (tmp_path / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return tmp_path


@pytest.fixture
def user_env() -> Callable[..., dict[str, str]]:
    """The environment of a user who configured nothing (plus ``extra`` variables)."""

    def make(**extra: str) -> dict[str, str]:
        env = dict(os.environ)
        for name in ("AALIS_CONFIG", "AALIS_LOAD_PLUGINS", "AALIS_DEBUG", "VIRTUAL_ENV"):
            env.pop(name, None)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["AALIS_LOG_LEVEL"] = "warning"
        env.update(extra)
        return env

    return make


@pytest.fixture
def run_shell(
    sandbox: Path, user_env: Callable[..., dict[str, str]]
) -> Callable[[str], subprocess.CompletedProcess[str]]:
    """Run a bash script (``set -e``) in the sandbox; an error fails the test with the output."""

    def run(script: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=sandbox,
            env=user_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, (
            f"script failed ({result.returncode}):\n{script}\n--- stdout\n{result.stdout}"
            f"\n--- stderr\n{result.stderr}"
        )
        return result

    return run
