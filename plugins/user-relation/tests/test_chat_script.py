"""End to end in real ``aalis`` processes on a fresh directory: a person moves city in the
middle of a conversation; the prompt block of a later question carries the new city, and
``aalis facts`` shows the old one as superseded, with the message it came from."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path


def aalis(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("aalis")
    assert exe.exists(), f"{exe} is missing; run ./scripts/setup"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
    return subprocess.run(
        [str(exe), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_move_mid_conversation_reaches_the_prompt_and_the_history(tmp_path: Path) -> None:
    (tmp_path / "script.txt").write_text(
        "I live in Paris.\nActually, I moved to Berlin last week.\nWhere do I live?\n/recall\n",
        encoding="utf-8",
    )
    chat = aalis(tmp_path, "chat", "--script", "script.txt")
    assert chat.returncode == 0, chat.stderr
    out = chat.stdout.splitlines()
    block = out[out.index("you> /recall") + 1 :]
    assert block[0] == "from user-relation:"
    assert re.fullmatch(r"  What I know about cli:\S+ \(from what they said.*\):", block[1])
    assert "  - city: Berlin" in block
    assert not any("Paris" in line for line in block)

    listed = aalis(tmp_path, "facts", "list")
    assert listed.returncode == 0, listed.stderr
    (paris,) = [line for line in listed.stdout.splitlines() if "city: Paris" in line]
    (berlin,) = [line for line in listed.stdout.splitlines() if "city: Berlin" in line]
    berlin_id = berlin.split()[0]
    assert "superseded" in paris
    assert f"by {berlin_id}" in paris
    assert "[current; offline;" in berlin
    paris_id = paris.split()[0]
    source = paris.rsplit(": ", 1)[1].rstrip("]")

    shown = aalis(tmp_path, "facts", "show", paris_id)
    assert shown.returncode == 0, shown.stderr
    assert f"source {source} [cli]: I live in Paris." in shown.stdout

    missing = aalis(tmp_path, "facts", "show", "no-such-fact")
    assert missing.returncode == 1
    assert "no fact has the id 'no-such-fact'" in missing.stderr


def test_aalis_facts_edit_retract_forget_and_bad_input(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text(
        "I live in Paris.\nI'm allergic to peanuts.\n", encoding="utf-8"
    )
    assert aalis(tmp_path, "chat", "--script", "s.txt").returncode == 0
    listed = aalis(tmp_path, "facts", "list", "--json")
    facts = [json.loads(line) for line in listed.stdout.splitlines()]
    (paris,) = [f for f in facts if f["value"] == "Paris"]
    person = paris["person"]

    edited = aalis(tmp_path, "facts", "edit", paris["id"], "Lyon")
    assert edited.returncode == 0, edited.stderr
    assert "city: Lyon  [current; user;" in edited.stdout
    current = aalis(tmp_path, "facts", "list", "--current").stdout
    assert "city: Lyon" in current
    assert "city: Paris" not in current
    lyon_id = next(line.split()[0] for line in current.splitlines() if "city: Lyon" in line)

    assert aalis(tmp_path, "facts", "retract", lyon_id).returncode == 0
    assert "city: Paris" in aalis(tmp_path, "facts", "list", "--current").stdout

    bad = aalis(tmp_path, "facts", "list", "--person", "nocolon")
    assert bad.returncode == 2
    assert "PLATFORM:USER_ID" in bad.stderr
    empty = aalis(tmp_path, "facts", "edit", paris["id"], " ")
    assert empty.returncode == 2
    gone = aalis(tmp_path, "facts", "retract", "no-such-fact")
    assert gone.returncode == 1
    assert "no fact has the id" in gone.stderr

    forgot = aalis(tmp_path, "facts", "forget", person, "--yes")
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.strip() == f"2 facts about {person} erased"  # Paris, peanuts
    assert aalis(tmp_path, "facts", "list").stdout == ""
