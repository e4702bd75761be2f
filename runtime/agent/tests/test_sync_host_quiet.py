"""A host opened from code is quiet at info level: a script or a notebook sees no log lines.

Run in real subprocesses, because logging is configured once per process: the question is
what a fresh ``python script.py`` prints, with every installed plugin discovered and started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from aalis_agent._sync_host import SyncHost
from aalis_schema_message import Message

config = {"host": {"data_dir": sys.argv[1]}}
if len(sys.argv) > 2:
    config["host"]["log_level"] = sys.argv[2]
with SyncHost(config) as aalis:
    aalis.memory.save_message("s", Message(role="user", content="hi"))
    print(len(aalis.memory.get_history("s")))
"""


def _run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "AALIS_LOG_LEVEL"}
    environ.update(env or {})
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "data"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=environ,
        check=True,
    )
    return done.stdout, done.stderr


def _info_lines(stderr: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("level") == "info"]


def test_a_sync_host_from_code_prints_nothing_at_info_level(tmp_path: Path) -> None:
    stdout, stderr = _run(tmp_path)
    assert stdout.strip() == "1"
    assert stderr == ""


def test_the_routine_lines_come_back_when_asked_for(tmp_path: Path) -> None:
    # Through the environment (no code change) ...
    _out, stderr = _run(tmp_path, env={"AALIS_LOG_LEVEL": "info"})
    assert _info_lines(stderr)
    # ... or through [host] log_level in the configuration.
    _out, stderr = _run(tmp_path, "info")
    assert _info_lines(stderr)


def test_an_unknown_environment_level_falls_back_to_the_quiet_default(tmp_path: Path) -> None:
    _out, stderr = _run(tmp_path, env={"AALIS_LOG_LEVEL": "loud"})
    assert stderr == ""


async def test_an_adapter_reaches_a_sync_host_through_its_bridge_and_a_host_through_this_loop(
    tmp_path: Path,
) -> None:
    from aalis_agent import LoopBridge, SyncHost, host_and_bridge

    sync = SyncHost(config={"host": {"data_dir": str(tmp_path)}}, discover=False)
    try:
        host, bridge = host_and_bridge(sync)
        assert host is sync.host
        assert bridge is sync.bridge
    finally:
        sync.close()
    plain = object()
    host, bridge = host_and_bridge(plain)
    assert host is plain
    assert isinstance(bridge, LoopBridge)
