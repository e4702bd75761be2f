"""One HTTP layer for both OpenAI-compatible clients (chat and embeddings).

Why one layer: the chat client and the embedder were two copies of the same loop, and the
copies drifted (only one honoured ``Retry-After``, kept a deadline and capped the body). The
rules now live here once, and ``llm.py`` / ``embedding.py`` only build payloads, read answers
and translate ``HttpFailure`` into their contract's errors.

The rules (docs/host/openai.md):

- 429 and 5xx mean "try again later"; a dropped connection too. Servers that send
  ``Retry-After`` (or OpenAI's ``retry-after-ms``) know better than a backoff formula when
  "later" is; without it the wait doubles from ``retry_backoff``. Any other 4xx is a mistake
  in the request (model name, key, input size) that a retry would only repeat: it fails at
  once with the server's own explanation.
- One ``Deadline`` bounds a whole call, attempts and waits included, so a caller can rely on
  one number. A wait that would end past the deadline is not started: the real cause (the
  429, the 503) is reported at once instead of a timeout later.
- A body larger than ``max_response_bytes`` is not read: a broken or hostile endpoint cannot
  make the process hold hundreds of megabytes.
- Every message and log line is built from the status and the server's error text, never from
  the request, and is scrubbed of the API key, the URL's credentials and anything
  ``aalis_core``'s redaction recognises, in case a server echoes them.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import time
import urllib.parse
from http import HTTPStatus
from typing import Any

import httpx

from aalis_core import MASK, AalisError, redact, uri_secrets
from aalis_plugin_openai._config import RetryPolicy

#: Statuses that mean "try again later".
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_ERROR_TEXT_LIMIT = 300


class HttpFailure(AalisError):
    """Base of the failures the layer reports; ``llm.py`` and ``embedding.py`` turn each into
    their contract's error, so none escapes the package. ``str()`` is already scrubbed."""


class Unreachable(HttpFailure):
    """The server could not be reached (refused, DNS, TLS, connection dropped)."""


class TimedOut(HttpFailure):
    """The deadline passed before an answer."""


class Unreadable(HttpFailure):
    """A 200 whose body is not JSON, or a body over the size cap."""


class StatusFailure(HttpFailure):
    """The server answered with a status other than 200."""

    def __init__(self, message: str, *, status: int, retry_after: float | None) -> None:
        super().__init__(message)
        self.status = status
        #: The server's last hint in seconds (``Retry-After``), when it sent one.
        self.retry_after = retry_after


class Deadline:
    """The end of one call: started when the call starts, shared by all its requests (the
    embedder's batches, say) and by the waits between them."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds

    def remaining(self) -> float:
        return self._at - time.monotonic()


def safe_url(url: str) -> str:
    """The URL without user info or query string (either may carry a credential)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def parse_retry_after(headers: httpx.Headers, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, then ``Retry-After`` (seconds
    or an HTTP date). None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
            if math.isfinite(value) and value >= 0:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        current = time.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    return value if math.isfinite(value) and value >= 0 else None


class Scrubber:
    """Masks the credentials one client knows of, and whatever ``redact`` recognises.

    The API key and the base URL's password and query values are masked literally: a server
    may echo a key that does not look like one (``Incorrect API key provided: hunter2``).
    Like ``uri_secrets``, a key shorter than 3 characters (a placeholder such as ``"x"`` for
    a local server that wants none) is not: masking it would garble every message."""

    def __init__(self, *, api_key: str | None, base_url: str) -> None:
        secrets = set(uri_secrets(base_url))
        if api_key and len(api_key) >= 3:
            secrets.add(api_key)
        self._secrets = sorted(secrets, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return redact(text)


class JsonEndpoint:
    """POSTs JSON to one URL under a ``RetryPolicy``; one instance keeps one connection pool.

    ``table`` names the config table (``plugins.llm-openai``) in the messages that tell the
    user which key to change; ``log_event`` and ``log_fields`` make the retry warning say
    which client is retrying.
    """

    def __init__(
        self,
        *,
        base_url: str,
        path: str,
        api_key: str | None,
        policy: RetryPolicy,
        table: str,
        log_event: str,
        log_fields: dict[str, Any],
        logger: Any = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + path
        self.shown_url = safe_url(self.url)
        self.policy = policy
        self.scrub = Scrubber(api_key=api_key, base_url=base_url)
        self._table = table
        self._log_event = log_event
        self._log_fields = log_fields
        self._logger = logger
        headers = {"User-Agent": "aalis-plugin-openai", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(headers=headers, transport=transport)

    def deadline(self) -> Deadline:
        """A deadline of ``policy.timeout`` seconds from now, for one call."""
        return Deadline(self.policy.timeout)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def post(self, payload: dict[str, Any], deadline: Deadline) -> Any:
        """The JSON of a 200 answer, after the retries the policy allows (``HttpFailure``)."""
        policy = self.policy
        attempt = 0
        while True:
            failure: HttpFailure
            wait: float | None = None
            try:
                return await self._attempt(payload, deadline)
            except (Unreachable, StatusFailure) as exc:
                if isinstance(exc, StatusFailure) and exc.status not in RETRY_STATUSES:
                    raise
                failure = exc
                if isinstance(exc, StatusFailure):
                    wait = exc.retry_after
            if attempt >= policy.max_retries:
                raise failure
            if wait is None:
                wait = policy.retry_backoff * (2**attempt)
            wait = min(wait, policy.max_retry_wait)
            if wait >= deadline.remaining():
                # Waiting would run past the caller's deadline: report the real cause now.
                raise failure
            attempt += 1
            if self._logger is not None:
                self._logger.warning(
                    self._log_event,
                    **self._log_fields,
                    error=str(failure),
                    retry_in=round(wait, 3),
                    attempt=attempt,
                )
            await asyncio.sleep(wait)

    def timed_out(self, deadline: Deadline) -> TimedOut:
        return TimedOut(f"no answer from {self.shown_url} within {deadline.seconds:g} s")

    async def _attempt(self, payload: dict[str, Any], deadline: Deadline) -> Any:
        remaining = deadline.remaining()
        if remaining <= 0:
            raise self.timed_out(deadline)
        try:
            # asyncio.timeout bounds the whole exchange; httpx's own timeout is per socket
            # operation, which a server trickling its body byte by byte would never trip.
            async with asyncio.timeout(remaining):
                status, headers, body = await self._exchange(payload, remaining)
        except (TimeoutError, httpx.TimeoutException):
            raise self.timed_out(deadline) from None
        except httpx.TransportError as exc:
            raise Unreachable(
                self.scrub(f"cannot reach {self.shown_url}: {type(exc).__name__}: {exc}")
            ) from None
        if status != 200:
            raise StatusFailure(
                f"HTTP {status} from {self.shown_url}: {_server_text(status, body, self.scrub)}",
                status=status,
                retry_after=parse_retry_after(headers),
            )
        try:
            return json.loads(body)
        except ValueError:
            raise Unreadable(
                f"{self.shown_url} answered 200 with a body that is not JSON"
            ) from None

    async def _exchange(
        self, payload: dict[str, Any], remaining: float
    ) -> tuple[int, httpx.Headers, bytes]:
        """POST and read at most ``max_response_bytes`` of the body (``Unreadable``)."""
        limit = self.policy.max_response_bytes
        request = self._client.build_request(
            "POST", self.url, json=payload, timeout=httpx.Timeout(remaining)
        )
        response = await self._client.send(request, stream=True)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise self._too_large(limit)
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise self._too_large(limit)
                chunks.append(chunk)
        finally:
            await response.aclose()
        return response.status_code, response.headers, b"".join(chunks)

    def _too_large(self, limit: int) -> Unreadable:
        return Unreadable(
            f"{self.shown_url} sent a response larger than {limit} bytes; not read "
            f"(raise [{self._table}] max_response_bytes if the endpoint is trusted)"
        )


def _server_text(status: int, body: bytes, scrub: Scrubber) -> str:
    """The server's own explanation, from the usual error shapes, on one short line.

    Scrubbed before it is shortened: cutting first could leave half a key that no longer
    matches the literal it is masked by."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
        elif isinstance(data.get("message"), str):
            text = data["message"]
    text = scrub(" ".join(text.split()))
    if len(text) > _ERROR_TEXT_LIMIT:
        text = text[: _ERROR_TEXT_LIMIT - 3] + "..."
    if text:
        return text
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "no details"


__all__ = [
    "RETRY_STATUSES",
    "Deadline",
    "HttpFailure",
    "JsonEndpoint",
    "Scrubber",
    "StatusFailure",
    "TimedOut",
    "Unreachable",
    "Unreadable",
    "parse_retry_after",
    "safe_url",
]
