"""``aalis serve`` as a user runs it: a real subprocess on the embedded default."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

AALIS = [sys.executable, "-c", "from aalis_core._cli import main; main()"]


def environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("AALIS_CONFIG", None)
    env["AALIS_LOAD_PLUGINS"] = "memory-sqlite,memory-summary,memory-cli,serve"
    return env


def test_serve_prints_a_tokened_address_and_stops_on_interrupt(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*AALIS, "serve", "--port", "0"],
        cwd=tmp_path,
        env=environment(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        address = process.stdout.readline().strip()
        assert "memory-sqlite" in first
        assert address.startswith("open http://127.0.0.1:")
        url = address.removeprefix("open ")
        base, token = url.split("/?token=")
        assert len(token) >= 16
        with httpx.Client(base_url=base, timeout=10) as client:
            assert client.get("/api/sessions").json()["total"] == 0
            anonymous = client.post(
                "/api/sessions/s/clear", json={}, headers={"X-Aalis-Request": "1"}
            )
            assert anonymous.status_code == 401
            login = client.get(url, follow_redirects=True)
            assert login.status_code == 200
            cleared = client.post(
                "/api/sessions/s/clear",
                json={"types": ["context"], "confirm": True},
                headers={"X-Aalis-Request": "1"},
            )
            assert cleared.status_code == 200, cleared.text
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        process.wait(timeout=15)
        assert time.monotonic() - started < 15
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr = process.stderr.read() if process.stderr else ""
    assert token not in stderr  # the token is printed once, on stdout, for the user


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    result = subprocess.run(
        [*AALIS, "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=tmp_path,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "needs a token" in result.stderr
    assert "Traceback" not in result.stderr
