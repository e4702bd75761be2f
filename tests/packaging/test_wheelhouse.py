"""Every distribution builds a wheel, and a plugin installs alone from the wheelhouse.

This is the path of a user who takes one part of Aalis without the checkout: build the
wheelhouse (``scripts/build-wheels``), then ``pip install --find-links`` into a clean venv.
The aalis distributions must all come from the wheelhouse (``--no-index`` for them is
enforced by installing them with the index disabled and their third-party dependencies
installed first from the usual index or pip cache).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(600)


def _distributions() -> dict[str, Path]:
    """Distribution name -> its directory, for every pyproject.toml of the checkout."""
    found = {"aalis-core": ROOT}
    for group in ("contracts", "runtime", "plugins", "integrations", "examples"):
        for pyproject in sorted((ROOT / group).glob("*/pyproject.toml")):
            name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
            found[name] = pyproject.parent
    return found


def _requirements(name: str, dists: dict[str, Path], seen: set[str] | None = None) -> set[str]:
    """Third-party requirements of ``name`` and of the aalis distributions it needs."""
    seen = set() if seen is None else seen
    if name in seen:
        return set()
    seen.add(name)
    project = tomllib.loads((dists[name] / "pyproject.toml").read_text(encoding="utf-8"))
    out: set[str] = set()
    for req in project["project"].get("dependencies", []):
        base = req.split(";")[0].split("[")[0]
        for sep in "<>=!~ ":
            base = base.split(sep)[0]
        if base in dists:
            out |= _requirements(base, dists, seen)
        else:
            out.add(req)
    return out


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(
        [str(ROOT / "scripts" / "build-wheels"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with no aalis distribution; pip of this test run installs into it."""
    where = tmp_path_factory.mktemp("clean") / "venv"
    venv.create(where, with_pip=False, symlinks=True)
    return where


def _pip(target: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(target / "bin" / "python"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _install_alone(target: Path, wheelhouse: Path, name: str) -> None:
    third_party = sorted(_requirements(name, _distributions()))
    if third_party:
        done = _pip(target, "install", "--quiet", *third_party)
        assert done.returncode == 0, done.stderr
    done = _pip(target, "install", "--quiet", "--no-index", "--find-links", str(wheelhouse), name)
    assert done.returncode == 0, done.stderr


def _aalis_installed(target: Path) -> dict[str, bool]:
    """aalis distribution -> whether it was installed editable (from a checkout)."""
    done = _pip(target, "list", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    return {
        row["name"]: "editable_project_location" in row
        for row in rows
        if row["name"].startswith("aalis")
    }


def _user_env(venv_dir: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("AALIS_") and key not in ("VIRTUAL_ENV", "PYTHONPATH")
    }
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["AALIS_LOG_LEVEL"] = "warning"
    return env


def _unpublished() -> set[str]:
    """The distributions under testing/ (the repository's test support): never for users."""
    return {
        tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
        for pyproject in sorted((ROOT / "testing").glob("*/pyproject.toml"))
    }


def test_every_distribution_builds_a_wheel(wheelhouse: Path) -> None:
    built = {p.name.split("-")[0].replace("_", "-") for p in wheelhouse.glob("*.whl")}
    assert built == set(_distributions())
    assert _unpublished() == {"aalis-test-support"}
    assert not built & _unpublished()


def test_the_test_support_says_it_is_not_for_pypi() -> None:
    """PyPI refuses an upload classified ``Private :: Do Not Upload``; the description says so
    to a reader."""
    project = tomllib.loads((ROOT / "testing/support/pyproject.toml").read_text("utf-8"))
    assert "Private :: Do Not Upload" in project["project"]["classifiers"]
    assert "not for PyPI" in project["project"]["description"]


def test_the_sqlite_plugin_installs_alone_then_the_agent_then_the_chat_runs_on_it(
    wheelhouse: Path, clean_venv: Path, tmp_path: Path
) -> None:
    _install_alone(clean_venv, wheelhouse, "aalis-plugin-memory-sqlite")
    assert _aalis_installed(clean_venv) == {
        "aalis-core": False,
        "aalis-schema-message": False,
        "aalis-api-memory": False,
        "aalis-plugin-memory-sqlite": False,
    }
    env = _user_env(clean_venv)
    aalis = str(clean_venv / "bin" / "aalis")
    listed = subprocess.run(
        [aalis, "plugins", "--json"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    states = {row["name"]: row["state"] for row in json.loads(listed.stdout)}
    assert states["memory-sqlite"] == "active"
    assert "chat" not in states

    # The agent runtime comes on top of the contracts alone (memory, and llm for the model a
    # turn takes): no CLI tools, no plugin.
    _install_alone(clean_venv, wheelhouse, "aalis-agent")
    assert set(_aalis_installed(clean_venv)) == {
        "aalis-core",
        "aalis-schema-message",
        "aalis-api-memory",
        "aalis-api-llm",
        "aalis-plugin-memory-sqlite",
        "aalis-agent",
    }

    _install_alone(clean_venv, wheelhouse, "aalis-plugin-chat")
    installed = set(_aalis_installed(clean_venv))
    # The chat and the aalis parts it depends on, nothing else (no other backend, no plugin
    # it does not need).
    assert {"aalis-plugin-chat", "aalis-api-llm", "aalis-plugin-memory-sqlite"} <= installed
    assert "aalis-plugin-memory-mongodb" not in installed
    script = tmp_path / "script.txt"
    script.write_text("hello from a wheel\n/quit\n", encoding="utf-8")
    first = subprocess.run(
        [aalis, "chat", "--session", "w", "--script", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert first.returncode == 0, first.stderr
    assert 'You said: "hello from a wheel"' in first.stdout
    # The turn is on disk in the SQLite file under .aalis/, so a second process reads it back.
    script.write_text("/history\n", encoding="utf-8")
    second = subprocess.run(
        [aalis, "chat", "--session", "w", "--script", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert second.returncode == 0, second.stderr
    assert "user> hello from a wheel" in second.stdout
    assert (tmp_path / ".aalis").is_dir()
