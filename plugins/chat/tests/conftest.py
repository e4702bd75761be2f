"""Fixtures of the chat tests: the ``aalis`` executable, and an OpenAI-compatible server on
loopback for the runs with a configured model (a few lines repeated from plugins/openai's tests:
fixtures cannot be imported across test directories)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def aalis(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``.venv/bin/aalis ARGS`` in ``tmp_path`` (no config unless the test writes one)."""
    exe = Path(sys.executable).with_name("aalis")
    assert exe.exists(), f"{exe} is missing; run ./scripts/setup"

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
        return subprocess.run(
            [str(exe), *args],
            cwd=tmp_path,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


@pytest.fixture
def sqlite_text(tmp_path: Path) -> Callable[[Path], str]:
    """Everything stored in a SQLite file, as one text (to check what it holds)."""

    def dump(path: Path) -> str:
        with sqlite3.connect(path) as conn:
            return "\n".join(conn.iterdump())

    return dump


class ModelServer:
    """Answers chat requests with a fixed reply and summary requests with JSON."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                server.requests.append(body)
                system = body["messages"][0]["content"] if body["messages"] else ""
                if "running summary" in system:
                    content = json.dumps(
                        {"summary": "The user plans a trip to Lisbon.", "keep": []}
                    )
                else:
                    content = f"Model reply #{len(server.requests)}"
                payload = json.dumps(
                    {
                        "choices": [
                            {
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer()
    thread = threading.Thread(
        target=server.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
