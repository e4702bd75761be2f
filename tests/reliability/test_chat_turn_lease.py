"""Three ``aalis chat`` processes on one session take turns; they never interleave.

Without a turn held in the store, process A saves its question, B saves its own, and A's model
is then asked with B's question as the newest one: A's reply answers B, and every later prompt
shows questions and replies out of pairs. Each turn holds the session's turn lease in the store
(docs/reference/turn.md), so another process's turn waits.

Real subprocesses of ``aalis chat --script`` on a shared SQLite data directory, the offline
stand-in as the model: it echoes the newest user message it was shown (``You said: "..."``),
which is how the test sees what each model was asked. Automatic compression runs beside the
turns (count line 50), so the test also sees that no process compressed the few messages
another process's compression had left.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

AALIS = str(Path(sys.executable).with_name("aalis"))
PROCESSES = 3
LINES = 20
SESSION = "shared"
ECHO = re.compile(r'You said: "(.*?)"\.')


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
    env["AALIS_LOG_LEVEL"] = "warning"
    return env


def test_three_chat_processes_on_one_session_take_turns(tmp_path: Path) -> None:
    scripts = []
    for p in range(PROCESSES):
        script = tmp_path / f"script-{p}.txt"
        script.write_text(
            "\n".join(f"process {p} question {i} about topic {p * 100 + i}" for i in range(LINES))
            + "\n",
            encoding="utf-8",
        )
        scripts.append(script)
    started = time.monotonic()
    procs = [
        subprocess.Popen(
            [AALIS, "chat", "--session", SESSION, "--script", str(script)],
            cwd=tmp_path,
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for script in scripts
    ]
    outputs = [proc.communicate(timeout=90) for proc in procs]
    elapsed = time.monotonic() - started
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, (out, err)

    # Each process's model answered that process's own question, every time.
    for p, (out, _) in enumerate(outputs):
        asked = [line[len("you> ") :] for line in out.splitlines() if line.startswith("you> ")]
        echoed = [
            m.group(1)
            for line in out.splitlines()
            if line.startswith("assistant> ") and (m := ECHO.search(line))
        ]
        assert len(asked) == LINES
        assert echoed == asked, f"process {p} was answered about other questions"

    # A process that had to wait said so, visibly.
    assert any("waiting for another turn in session 'shared'" in err for _, err in outputs)

    # In the store, every reply directly follows the question it answers.
    shown = subprocess.run(
        [AALIS, "history", SESSION, "--full", "--json", "--limit", "100000"],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    records = json.loads(shown.stdout)
    conversation = [
        r for r in records if r.get("role") in ("user", "assistant") and not r.get("kind")
    ]
    assert len(conversation) == 2 * PROCESSES * LINES
    misplaced = []
    for index, record in enumerate(conversation):
        if record["role"] != "assistant":
            continue
        before = conversation[index - 1] if index else None
        match = ECHO.search(record["content"] or "")
        if (
            before is None
            or before["role"] != "user"
            or match is None
            or match.group(1) != before["content"]
        ):
            misplaced.append(index)
    assert not misplaced, f"{len(misplaced)} replies do not follow their question"

    # Automatic compression (count line 50) compressed long stretches only: a process whose
    # usage figures predate another process's compression does not compress what is left.
    dividers = [
        r["metadata"] for r in records if r.get("kind") == "event-marker" and r.get("metadata")
    ]
    archived = [d.get("archived") for d in dividers if d.get("event") == "compression"]
    assert archived, "no automatic compression ran"
    assert min(archived) >= 10, f"compressions archived {archived} messages"
    assert elapsed < 60
