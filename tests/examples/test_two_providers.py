"""examples/two_providers.py runs and shows what docs/host/providers.md promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_two_consumers_are_pinned_to_two_providers(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "two_providers.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "journal: memory -> memory-sqlite" in lines
    assert "scratchpad: memory -> memory-inmemory" in lines
    assert "memory-sqlite holds: ['deployed v2'] and 0 scratch messages" in lines
    assert "memory-inmemory holds: ['try a smaller batch size'] and 0 journal messages" in lines
    assert any(
        "scratchpad memory present=False (pinned to memory-inmemory" in line for line in lines
    )
    assert any(
        line.startswith("scratchpad.write -> CapabilityAbsent:") and "'scratchpad'" in line
        for line in lines
    )
    assert lines[-1] == "journal kept on disk: ['journal.db']"
    assert (tmp_path / "journal.db").is_file()
