"""The third-party example plugin, as a user installs and runs it.

``scripts/setup`` installs ``examples/*/`` editable, like every distribution; the first
test checks that (and installs it with ``pip install --no-deps -e`` under the set-up lock
if it is missing, which is exactly what set-up would have done). The package is also built
as an ordinary, non-editable wheel, whose metadata is what an index would publish.

Then the real ``aalis`` console script runs as a subprocess with ``AALIS_CONFIG`` pointing
to a temporary ``aalis.toml`` (SQLite under the temporary folder), the way a user types it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "aalis-plugin-notes"
BIN = Path(sys.executable).parent
ENTRY_POINT = "notes = aalis_plugin_notes:NotesPlugin"


def _installed_version() -> str | None:
    import importlib_metadata

    try:
        dist = importlib_metadata.distribution("aalis-plugin-notes")
    except importlib_metadata.PackageNotFoundError:
        return None
    names = {ep.name: ep.value for ep in dist.entry_points if ep.group == "aalis.plugins"}
    assert names == {"notes": "aalis_plugin_notes:NotesPlugin"}
    return dist.version


@pytest.fixture(scope="module")
def installed() -> str:
    """The installed version; installs the example editable if set-up has not yet."""
    version = _installed_version()
    if version is None:
        command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e", str(EXAMPLE)]
        if shutil.which("flock"):  # scripts/setup holds this lock while it runs pip
            command = ["flock", str(ROOT / ".setup.lock"), *command]
        subprocess.run(command, check=True, cwd=ROOT, timeout=300)
        importlib.invalidate_caches()
        version = _installed_version()
    assert version is not None, "aalis-plugin-notes is not installed"
    return version


def test_the_example_is_installed_with_its_entry_point(installed: str) -> None:
    assert installed == "0.2.0"
    spec = importlib.util.find_spec("aalis_plugin_notes")
    assert spec is not None
    assert spec.origin is not None
    assert Path(spec.origin).resolve().is_relative_to(EXAMPLE)


def test_a_non_editable_wheel_carries_the_entry_point(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        str(EXAMPLE),
        "-w",
        str(tmp_path),
    ]
    if importlib.util.find_spec("hatchling") is not None:  # build offline with what is here
        command.insert(4, "--no-build-isolation")
    subprocess.run(command, check=True, timeout=300)
    (wheel,) = tmp_path.glob("aalis_plugin_notes-0.2.0-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = archive.read("aalis_plugin_notes-0.2.0.dist-info/entry_points.txt")
        metadata = archive.read("aalis_plugin_notes-0.2.0.dist-info/METADATA").decode()
    text = entry_points.decode()
    assert "[aalis.plugins]" in text
    assert ENTRY_POINT in text
    assert "aalis_plugin_notes/py.typed" in names
    assert not any(name.startswith("tests/") for name in names)
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert any("aalis-core" in line for line in requires)
    assert any("aalis-api-memory" in line for line in requires)
    assert any("aalis-schema-message" in line for line in requires)
    assert not any("aalis-plugin-memory" in line and "extra ==" not in line for line in requires)


@pytest.fixture
def aalis(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the ``aalis`` console script in ``tmp_path`` with a temporary aalis.toml."""
    config = tmp_path / "aalis.toml"
    config.write_text(
        "[host]\n"
        'data_dir = "data"\n\n'
        "[plugins.memory-sqlite]\n"
        'path = "aalis.db"\n\n'
        "[capabilities.memory]\n"
        'provider = "memory-sqlite"\n',
        encoding="utf-8",
    )

    def run(
        *args: str, ok: bool = True, log_level: str = "warning"
    ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "AALIS_CONFIG": str(config), "AALIS_LOG_LEVEL": log_level}
        env.pop("AALIS_LOAD_PLUGINS", None)
        result = subprocess.run(
            [str(BIN / "aalis"), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if ok:
            assert result.returncode == 0, (
                f"aalis {' '.join(args)}:\n{result.stdout}{result.stderr}"
            )
        return result

    return run


def test_plugins_lists_notes_with_its_version(
    installed: str, aalis: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    listed = {p["name"]: p for p in json.loads(aalis("plugins", "--json").stdout)}
    notes = listed["notes"]
    assert (notes["version"], notes["state"], notes["error"]) == (installed, "active", None)
    assert notes["bindings"] == {"memory": "memory-sqlite"}
    table = aalis("plugins").stdout.splitlines()
    (row,) = [line for line in table if line.split()[0] == "notes"]
    assert row.split()[1:3] == [installed, "active"]


def test_notes_commands_and_clears_through_the_cli(
    installed: str, aalis: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    aalis("notes", "add", "s1", "call back on Monday")
    aalis("notes", "add", "s1", "prefers email")
    aalis("notes", "add", "s2", "other session")
    listed = aalis("notes", "list", "s1").stdout.splitlines()
    assert [line.split("  ", 1)[1] for line in listed] == ["call back on Monday", "prefers email"]

    # a history for s1, so that clearing notes alone can be seen to keep it
    history = tmp_path / "s1.jsonl"
    history.write_text(
        '{"format": "aalis-memory-export", "version": 1}\n'
        '{"session_id": "s1", "archived": false, "message": {"role": "user", "content": "hi", "timestamp": 1}}\n'
        '{"session_id": "s1", "archived": false, "message": {"role": "assistant", "content": "hello", "timestamp": 2}}\n',
        encoding="utf-8",
    )
    aalis("import", str(history))

    cleared = aalis("clear", "--session", "s1", "-t", "notes")
    assert "2 notes deleted" in cleared.stdout
    assert "notes" in cleared.stdout
    assert aalis("notes", "list", "s1").stdout.strip() == "No notes for s1."
    assert "other session" in aalis("notes", "list", "s2").stdout
    kept = aalis("export", "s1").stdout.splitlines()
    assert len(kept) == 3  # header + both messages: only notes were cleared

    everything = aalis("clear", "--all", "--yes", log_level="info")
    assert "notes of 1 session deleted" in everything.stdout
    # the plugin's history_changed listener saw the cleared session
    events = [json.loads(line) for line in everything.stderr.splitlines() if line.startswith("{")]
    assert any(
        e.get("plugin") == "notes"
        and e.get("event") == "history changed"
        and e.get("session_id") == "s1"
        for e in events
    ), everything.stderr
    assert aalis("notes", "list", "s2").stdout.strip() == "No notes for s2."
    gone = aalis("export", "s1", ok=False)
    assert gone.returncode == 1
    assert "has no messages" in gone.stderr


def test_a_bad_notes_setting_is_a_config_error(
    installed: str, aalis: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    config = tmp_path / "aalis.toml"
    config.write_text(config.read_text() + "\n[plugins.notes]\nmax_notes = 0\n", encoding="utf-8")
    result = aalis("notes", "list", "s1", ok=False)
    assert result.returncode == 1
    assert "[plugins.notes] key 'max_notes'" in result.stderr
    assert "Traceback" not in result.stderr
