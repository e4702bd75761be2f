"""examples/side_by_side.py runs every framework and prints what
docs/integrations/side-by-side.md shows (a quick run: 2 turns each), so the page cannot rot.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "integrations" / "side-by-side.md"


def test_the_side_by_side_runs_and_the_page_shows_its_lines(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "side_by_side.py"), "--turns", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    titles = re.findall(r"^== (.+) \(2 turns\)$", out, re.MULTILINE)
    assert len(titles) == 5
    # Every Aalis side: the real aalis history shows the 4 messages, compress archives them,
    # the clear leaves nothing; the LangGraph clear takes the checkpoints too.
    assert out.count(": 4 lines, the last:") >= 4  # LlamaIndex's Memory may archive some
    assert out.count("after the clear: 0 messages in the history") == 5
    assert "LangGraph checkpoints cleared (thread 'trip-langgraph') [langgraph]" in out
    assert "after the clear: 0 metadata entries in langgraph:trip-langgraph" in out
    assert "built-in  SQLiteSession(db_path=agents.db): 4 rows" in out
    assert "DatabaseSessionService(adk.db): 4 event rows" in out
    # The page pastes a real (20-turn) run of the same script: same sections, same lines.
    page = PAGE.read_text(encoding="utf-8")
    for title in titles:
        assert f"== {title} (20 turns)" in page
    for line in out.splitlines():
        shape = re.sub(r"\d", "0", line.split(":")[0])
        assert any(re.sub(r"\d", "0", p.split(":")[0]) == shape for p in page.splitlines()), line
