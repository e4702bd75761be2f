"""docs/host/configuration.md is generated from the attrs Config classes and cannot drift.

The test regenerates the reference with scripts/gen-config-docs and fails when the
committed file differs: a plugin that adds, renames or re-defaults a setting must run
``./scripts/gen-config-docs`` and commit the result in the same change.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen-config-docs"
REFERENCE = ROOT / "docs" / "host" / "configuration.md"


def _generate() -> str:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--stdout"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_committed_reference_is_what_the_config_classes_say() -> None:
    generated = _generate()
    committed = REFERENCE.read_text(encoding="utf-8")
    assert committed == generated, (
        "docs/host/configuration.md is out of date: run ./scripts/gen-config-docs and commit it"
    )


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text(REFERENCE.read_text(encoding="utf-8").replace("`5000`", "`4000`", 1))
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "-o", str(stale)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "out of date" in result.stderr
    # the diff shows the line as committed and as generated
    assert any(line.startswith("-") and "`4000`" in line for line in result.stdout.splitlines())
    assert any(line.startswith("+") and "`5000`" in line for line in result.stdout.splitlines())


def test_every_key_of_host_and_installed_plugins_is_documented() -> None:
    """Introspect the same classes independently and find each key in its table."""
    import importlib_metadata

    from aalis_core._config import HostSettings

    text = REFERENCE.read_text(encoding="utf-8")

    def section(title: str) -> str:
        start = text.index(f"`[{title}]`")
        end = text.find("\n### ", start + 1)
        return text[start : end if end != -1 else len(text)]

    for field in attrs.fields(HostSettings):
        assert f"| `{field.name}` |" in section("host")
    documented = 0
    for ep in importlib_metadata.entry_points(group="aalis.plugins"):
        cls = ep.load()
        module = sys.modules[cls.__module__]
        if not Path(module.__file__ or "").resolve().is_relative_to(ROOT):
            continue  # plugins installed from elsewhere are not part of this reference
        body = section(f"plugins.{ep.name}")
        documented += 1
        if cls.Config is None:
            assert "takes no settings" in body
            continue
        for field in attrs.fields(cls.Config):
            assert f"| `{field.name}` |" in body, f"[plugins.{ep.name}] {field.name}"
    assert documented >= 6
