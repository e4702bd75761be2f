"""``aalis serve [--host H] [--port P]``: run the API and the page until interrupted.

Every ``aalis`` command imports this module (the plugin registers the command), so uvicorn
and Starlette (the app) are imported by ``serve``, when the server runs, not here.
"""

from __future__ import annotations

import secrets
import socket
from typing import TYPE_CHECKING, Any

import click

from aalis_core import open_host, run_async
from aalis_plugin_serve._config import ServeConfig, is_loopback

if TYPE_CHECKING:
    from aalis_plugin_serve._security import Guard


def plan_guard(config: ServeConfig, host: str) -> tuple[Guard, bool]:
    """The guard for binding to ``host``; refuses a non-loopback address without a token.

    Returns the guard and whether the token was generated for this run (to be printed).
    """
    from aalis_plugin_serve._security import Guard

    loopback = is_loopback(host)
    if not loopback and config.token is None:
        raise click.UsageError(
            f"binding to {host} needs a token: set [plugins.serve] token "
            '(for example token = "${AALIS_SERVE_TOKEN}"), or bind to 127.0.0.1'
        )
    token = config.token or secrets.token_urlsafe(24)
    guard = Guard(token, token_configured=config.token is not None, loopback=loopback)
    return guard, config.token is None


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def page_address(sock: socket.socket, token: str | None) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    suffix = f"/?token={token}" if token else "/"
    return f"http://{shown}:{port}{suffix}"


async def serve(host_name: str | None, port: int | None) -> None:
    import uvicorn

    from aalis_plugin_serve._app import ServeState, create_app

    async with open_host() as host:
        plugin: Any = host.plugin("serve")
        info = {i.name: i for i in host.plugins()}.get("serve")
        if plugin is None or info is None or info.state != "active" or plugin.ctx is None:
            reason = info.error if info is not None and info.error else "not loaded"
            raise LookupError(f"the serve plugin is not active ({reason})")
        config: ServeConfig = plugin.config
        address = host_name or config.host
        guard, generated = plan_guard(config, address)
        state = ServeState(
            host=host, caps=plugin.ctx.caps, broker=plugin.broker, guard=guard, config=config
        )
        sock = bind(address, config.port if port is None else port)
        click.echo(f"serving the memory of {state.caps.memory.provider or 'no provider'}")
        click.echo(f"open {page_address(sock, guard.token if generated else None)}")
        server = uvicorn.Server(
            uvicorn.Config(create_app(state), log_level="warning", lifespan="off")
        )
        await server.serve(sockets=[sock])


@click.command("serve")
@click.option("--host", "host_name", metavar="H", help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), metavar="P", help="Port (default 8765).")
def serve_command(host_name: str | None, port: int | None) -> None:
    """Serve the memory: a JSON API under /api/, live events and a web page."""
    run_async(serve(host_name, port))


__all__ = ["bind", "page_address", "plan_guard", "serve", "serve_command"]
