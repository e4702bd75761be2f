"""Who may read and who may write: the token, the Host header and request-size checks.

The rules (docs/host/serve.md):

* Bound to loopback without a configured token, reads are open to this machine; writes need
  the per-run token that ``aalis serve`` prints in the page's address.
* With a configured token (required for any non-loopback address) every API request needs it.
* The token comes as ``Authorization: Bearer ...`` or as the ``aalis_token`` cookie the page
  receives from ``/?token=...``; it is compared in constant time.
* Writes are POSTs with ``Content-Type: application/json`` and an ``X-Aalis-Request`` header.
  A browser can send neither across origins without a CORS preflight, which this server never
  answers, so another site cannot make a visitor's browser clear their memory (CSRF).
* On loopback the ``Host`` header must name loopback too, so a DNS-rebinding page cannot
  reach the API under a name of its own.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import Request

from aalis_core import AalisError
from aalis_plugin_serve._config import is_loopback

COOKIE = "aalis_token"
WRITE_HEADER = "x-aalis-request"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Denied(AalisError):
    """A request the rules refuse; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Guard:
    def __init__(self, token: str, *, token_configured: bool, loopback: bool) -> None:
        self.token = token
        self.token_configured = token_configured
        self.loopback = loopback

    def presented(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            return header[7:].strip()
        return request.cookies.get(COOKIE)

    def valid(self, candidate: str | None) -> bool:
        if candidate is None:
            return False
        return hmac.compare_digest(candidate.encode(), self.token.encode())

    def check_host(self, request: Request) -> None:
        if not self.loopback:
            return
        name = request.headers.get("host", "")
        host = name.rsplit(":", 1)[0] if not name.endswith("]") else name
        if not is_loopback(host):
            raise Denied(421, "this server answers only to a loopback host name")

    def check_read(self, request: Request) -> None:
        self.check_host(request)
        if self.token_configured and not self.valid(self.presented(request)):
            raise Denied(401, "a valid token is required (Authorization: Bearer or cookie)")

    def check_write(self, request: Request) -> None:
        self.check_host(request)
        if not self.valid(self.presented(request)):
            raise Denied(401, "writes need the server's token (Authorization: Bearer or cookie)")
        if WRITE_HEADER not in request.headers:
            raise Denied(403, f"writes need the {WRITE_HEADER} header")
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise Denied(415, "writes take a JSON body (Content-Type: application/json)")


class BodyLimit:
    """Refuses bodies over ``limit`` bytes, declared or streamed, before a handler reads them."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _refuse(send, 400, "a bad Content-Length header")
                    return
                if declared > self.limit:
                    await _refuse(send, 413, f"the body is over {self.limit} bytes")
                    return
        seen = 0
        limit = self.limit

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise Denied(413, f"the body is over {limit} bytes")
            return message

        await self.app(scope, counted, send)


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


__all__ = ["COOKIE", "WRITE_HEADER", "BodyLimit", "Denied", "Guard"]
