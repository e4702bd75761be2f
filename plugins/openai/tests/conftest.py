"""A real chat-completions server on loopback, scripted per test.

The client is tested against actual HTTP (sockets, headers, status codes, slow bodies)
rather than a mocked transport, so retries and timeouts are exercised as they happen.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
import pytest


@attrs.define
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON, str -> raw text
    headers: dict[str, str] = attrs.Factory(dict)
    delay: float = 0.0


def completion(content: str, *, usage: bool = True, finish: str = "stop") -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model-0301",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    return body


class ChatServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers.items()),
                        "json": json.loads(raw),
                    }
                )
                reply = (
                    server.replies.pop(0)
                    if server.replies
                    else Reply(500, {"error": "no scripted reply"})
                )
                if reply.delay:
                    server.release.wait(reply.delay)
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                payload = data.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.base_url = f"http://{host!s}:{port}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.httpd.shutdown()
        server.httpd.server_close()


@pytest.fixture
def reply_type() -> type[Reply]:
    return Reply


@pytest.fixture
def completion_body() -> Any:
    return completion
