"""Run the serve app in-process on a loopback port: for tests and embedding hosts.

``running(host)`` starts a real uvicorn server in the caller's event loop, so the caller can
save messages or emit events on the same host while an HTTP client or a browser talks to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import uvicorn
from aalis_api_memory import memory
from aalis_schema_message import Message

from aalis_core import Host
from aalis_plugin_serve._app import ServeState, create_app
from aalis_plugin_serve._cli import bind
from aalis_plugin_serve._config import ServeConfig
from aalis_plugin_serve._security import Guard

TOKEN = "test-token-0123456789abcdef"


@attrs.define
class Served:
    host: Host
    url: str
    token: str
    state: ServeState

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=10, **kwargs)

    def writer(self) -> httpx.AsyncClient:
        """A client that sends what a write needs: the token and the request header."""
        return self.client(
            headers={"Authorization": f"Bearer {self.token}", "X-Aalis-Request": "1"}
        )

    async def save(
        self, session_id: str, *pairs: tuple[str, str], start: int = 1000, step: int = 1
    ) -> None:
        service = self.host.capability(memory).use
        for offset, (role, content) in enumerate(pairs):
            await service.save_message(
                session_id, Message(role=role, content=content, timestamp=start + offset * step)
            )


def host_config(data_dir: Path, **serve: Any) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(data_dir)},
        "plugins": {
            # The lexical embedder keeps each test's host start cheap (no model to load).
            "disabled": ["memory-mongodb", "llm-openai", "embedding-local", "embedding-openai"],
            "memory-summary": {"summariser": "extractive"},
            "serve": serve,
        },
    }


@contextlib.asynccontextmanager
async def running(
    host: Host, *, configured_token: bool = False, config: ServeConfig | None = None
) -> AsyncIterator[Served]:
    plugin: Any = host.plugin("serve")
    if plugin is None or plugin.ctx is None:
        raise LookupError(f"the serve plugin is not active: {host.plugins()}")
    config = config or plugin.config
    guard = Guard(TOKEN, token_configured=configured_token, loopback=True)
    state = ServeState(
        host=host, caps=plugin.ctx.caps, broker=plugin.broker, guard=guard, config=config
    )
    sock: socket.socket = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(state), log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # uvicorn offers no event for it
        if task.done():
            await task  # raises what stopped the server
        await asyncio.sleep(0.01)
    try:
        yield Served(host=host, url=f"http://127.0.0.1:{port}", token=TOKEN, state=state)
    finally:
        server.should_exit = True
        server.force_exit = True  # open event streams do not hold the shutdown
        await asyncio.wait_for(task, 10)
        sock.close()


__all__ = ["TOKEN", "Served", "host_config", "running"]
