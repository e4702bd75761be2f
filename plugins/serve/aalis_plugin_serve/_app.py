"""The Starlette application: the JSON API under ``/api/``, the event stream and the page.

Every handler talks to memory through the serve plugin's own handles (consumer ``serve``), so
``[consumers.serve]`` pins apply, and clears go through ``run_clear`` so every plugin takes
part exactly as in ``aalis clear``. Errors are JSON ``{"error": ...}`` with a fitting status.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any

import attrs
from aalis_agent import UndoError, clear_types, run_clear, undo_last_turn
from aalis_api_memory import (
    COMPRESSION_ABSENT,
    CompressionError,
    MemoryService,
    MetadataKeys,
    SessionInfo,
    Transfer,
    UnknownClearType,
    check_session_id,
    history_cleared,
    supports,
)
from aalis_api_relation import FactNotFound
from aalis_api_vectorstore import RecallUnavailable
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from aalis_core import AalisError, CapabilityAbsent
from aalis_plugin_serve._broker import EventBroker
from aalis_plugin_serve._config import ServeConfig
from aalis_plugin_serve._confirm import (
    NotConfirmed,
    TurnChanged,
    check_expected,
    expected_timestamps,
    require_confirmation,
    undo_preview,
)
from aalis_plugin_serve._facts import edit_fact, fact_json, session_facts
from aalis_plugin_serve._forget import parse_person, persons_of, run_forget
from aalis_plugin_serve._security import COOKIE, BodyLimit, Denied, Guard
from aalis_plugin_serve._timeline import summary_json, timeline

Handler = Callable[[Request], Awaitable[Response]]

#: Sessions one page of ``/api/sessions`` holds at most.
MAX_PAGE = 500
#: Seconds between keep-alive comments on the event stream.
PING_SECONDS = 15


@attrs.define
class ServeState:
    """What the handlers need: the host (clears, events), the plugin's handles, the rules."""

    host: Any
    caps: Any
    broker: EventBroker
    guard: Guard
    config: ServeConfig


class BadRequest(AalisError):
    pass


class NotFound(AalisError):
    pass


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def _int_param(request: Request, name: str, default: int, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer from 0 to {maximum}") from None
    if not 0 <= value <= maximum:
        raise BadRequest(f"{name} must be an integer from 0 to {maximum}")
    return value


def _session(request: Request) -> str:
    try:
        session_id: str = check_session_id(request.path_params["session_id"])
    except (TypeError, ValueError) as exc:
        raise BadRequest(str(exc)) from None
    if not session_id.strip():
        raise BadRequest("the session id is empty")
    return session_id


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def _guarded(state: ServeState, handler: Handler, *, write: bool = False) -> Handler:
    async def endpoint(request: Request) -> Response:
        try:
            if write:
                state.guard.check_write(request)
            else:
                state.guard.check_read(request)
            return await handler(request)
        except Denied as exc:
            return _error(exc.status, exc.message)
        except (BadRequest, NotConfirmed) as exc:
            return _error(400, str(exc))
        except TurnChanged as exc:
            return _error(409, str(exc))
        except NotFound as exc:
            return _error(404, str(exc))
        except UnknownClearType as exc:
            return _error(400, str(exc), known=exc.known)
        except CapabilityAbsent as exc:
            return _error(503, str(exc))

    return endpoint


def create_app(state: ServeState) -> Any:
    """The ASGI application (with the body-size limit around it)."""

    def memory() -> MemoryService:
        service: MemoryService = state.caps.memory.use
        return service

    async def session_infos() -> list[SessionInfo]:
        service = memory()
        if not supports(service, Transfer, "list_sessions"):
            raise NotFound("the memory backend cannot list sessions")
        return list(await service.list_sessions())

    async def summary_of(session_id: str) -> Any:
        handle = state.caps.compression
        if not handle.present:
            return None
        return await handle.use.summary(session_id)

    async def sessions(request: Request) -> Response:
        offset = _int_param(request, "offset", 0, 10**9)
        limit = _int_param(request, "limit", 50, MAX_PAGE)
        infos = await session_infos()
        page = infos[offset : offset + limit]
        return JSONResponse(
            {
                "total": len(infos),
                "offset": offset,
                "limit": limit,
                "sessions": [
                    {
                        "session_id": info.session_id,
                        "active": info.active,
                        "archived": info.archived,
                        "last_timestamp": info.last_timestamp,
                    }
                    for info in page
                ],
            }
        )

    async def history(request: Request) -> Response:
        session_id = _session(request)
        limit = _int_param(request, "limit", 50, 10**6)
        messages = await memory().get_history(session_id, limit)
        if not messages and await summary_of(session_id) is None:
            await _require_session(session_id)
        return JSONResponse({"session_id": session_id, "messages": [m.to_json() for m in messages]})

    async def _require_session(session_id: str) -> None:
        if not any(info.session_id == session_id for info in await session_infos()):
            raise NotFound(f"no session {session_id!r}")

    async def full(request: Request) -> Response:
        session_id = _session(request)
        limit = _int_param(request, "limit", state.config.timeline_limit, 10**6)
        service = memory()
        if not supports(service, Transfer, "export_session"):
            raise NotFound("the memory backend cannot show archived messages")
        stored = await service.export_session(session_id)
        record = await summary_of(session_id)
        if not stored and record is None:
            raise NotFound(f"no session {session_id!r}")
        return JSONResponse({"session_id": session_id, **timeline(stored, record, limit)})

    async def summary(request: Request) -> Response:
        session_id = _session(request)
        return JSONResponse(
            {"session_id": session_id, "summary": summary_json(await summary_of(session_id))}
        )

    async def namespaces(request: Request) -> Response:
        service = memory()
        if not supports(service, MetadataKeys, "list_namespaces"):
            raise NotFound("the memory backend cannot list namespaces")
        return JSONResponse({"namespaces": list(await service.list_namespaces())})

    async def namespace(request: Request) -> Response:
        name = request.path_params["namespace"]
        entries = await memory().list_metadata(name)
        return JSONResponse(
            {
                "namespace": name,
                "entries": [
                    {"key": e.key, "data": e.data, "updated_at": e.updated_at} for e in entries
                ],
            }
        )

    async def types(request: Request) -> Response:
        return JSONResponse(
            {"types": [{"id": t.id, "label": str(t.label)} for t in clear_types(state.host)]}
        )

    async def clear(request: Request) -> Response:
        session_id = _session(request)
        body = await _json_body(request)
        wanted = body.get("types")
        if wanted is not None and (
            not isinstance(wanted, list) or not all(isinstance(t, str) and t for t in wanted)
        ):
            raise BadRequest("types must be null or a list of clear type ids")
        require_confirmation(body, f"clearing session {session_id!r}")
        rows = await run_clear(
            state.host, "session", session_id, wanted or None, memory=state.caps.memory
        )
        return JSONResponse(
            {
                "session_id": session_id,
                "history_cleared": history_cleared(rows),
                "rows": [
                    {
                        "source": row.source,
                        "success": row.success,
                        "type": row.type,
                        "message": str(row.message),
                    }
                    for row in rows
                ],
            }
        )

    async def compress(request: Request) -> Response:
        session_id = _session(request)
        await _json_body(request)
        handle = state.caps.compression
        if not handle.present:
            return _error(503, COMPRESSION_ABSENT)
        try:
            await handle.use.compress(session_id, reason="manual")
        except CompressionError as exc:
            status = 409 if exc.reason_code in ("busy", "history_changed", "cleared") else 502
            return _error(status, str(exc), reason_code=exc.reason_code)
        return JSONResponse(
            {"session_id": session_id, "summary": summary_json(await summary_of(session_id))}
        )

    async def undo_plan(request: Request) -> Response:
        session_id = _session(request)
        turn = await undo_preview(memory(), session_id)
        return JSONResponse({"session_id": session_id, "messages": [m.to_json() for m in turn]})

    async def undo(request: Request) -> Response:
        session_id = _session(request)
        body = await _json_body(request)
        try:
            expected = expected_timestamps(body)
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        require_confirmation(body, f"undoing the last turn of session {session_id!r}")
        if expected is not None:
            check_expected(await undo_preview(memory(), session_id), expected)
        try:
            outcome = await undo_last_turn(memory(), session_id, state.host.emit)
        except UndoError as exc:
            return _error(409, str(exc))
        return JSONResponse(
            {
                "session_id": session_id,
                "deleted": outcome.deleted,
                "messages": [m.to_json() for m in outcome.messages],
            }
        )

    async def persons_in(session_id: str) -> list[dict[str, Any]]:
        service = memory()
        if supports(service, Transfer, "export_session"):
            messages = [record.message for record in await service.export_session(session_id)]
        else:
            messages = await service.get_history(session_id, math.inf)
        return persons_of(messages)

    async def persons(request: Request) -> Response:
        session_id = _session(request)
        return JSONResponse({"session_id": session_id, "persons": await persons_in(session_id)})

    def relation() -> Any:
        handle = state.caps.relation
        if not handle.present:
            raise NotFound("no relation provider is active (install aalis-plugin-user-relation)")
        return handle.use

    async def facts(request: Request) -> Response:
        session_id = _session(request)
        service = relation()
        return JSONResponse(await session_facts(service, session_id, await persons_in(session_id)))

    async def fact_edit(request: Request) -> Response:
        service = relation()
        body = await _json_body(request)
        value = body.get("value")
        if not isinstance(value, str) or not value.strip():
            raise BadRequest("value must be a non-empty string")
        try:
            fact = await edit_fact(service, request.path_params["fact_id"], value)
        except FactNotFound as exc:
            raise NotFound(str(exc)) from None
        except NotImplementedError as exc:
            return _error(501, str(exc))
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        return JSONResponse({"fact": fact_json(fact)})

    async def fact_retract(request: Request) -> Response:
        service = relation()
        fact_id = request.path_params["fact_id"]
        require_confirmation(await _json_body(request), f"retracting fact {fact_id}")
        try:
            await service.retract(fact_id)
        except FactNotFound as exc:
            raise NotFound(str(exc)) from None
        return JSONResponse({"retracted": fact_id})

    async def forget(request: Request) -> Response:
        body = await _json_body(request)
        try:
            person = parse_person(body.get("person"))
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        require_confirmation(body, f"forgetting {person}")
        try:
            rows = await run_forget(state.host, person)
        except Exception as exc:
            return _error(500, f"forgetting {person} failed: {exc}")
        return JSONResponse(
            {
                "person": str(person),
                "forgotten": all(row["success"] for row in rows),
                "rows": rows,
            }
        )

    async def recall_search(request: Request) -> Response:
        handle = state.caps.recall
        if not handle.present:
            return _error(503, "no recall provider is active (install aalis-plugin-memory-vector)")
        raw = request.query_params.get("session")
        query = request.query_params.get("q", "")
        if raw is None or not query.strip():
            raise BadRequest("recall needs session=ID and a non-empty q=QUERY")
        try:
            session_id = check_session_id(raw)
        except (TypeError, ValueError) as exc:
            raise BadRequest(str(exc)) from None
        k = _int_param(request, "k", 5, 50)
        try:
            hits = await handle.use.recall(session_id, query, k=k)
        except RecallUnavailable as exc:
            return _error(503, str(exc))
        return JSONResponse(
            {
                "session_id": session_id,
                "query": query,
                "hits": [
                    {
                        "session_id": hit.session_id,
                        "score": hit.score,
                        "source": hit.source,
                        "message": hit.message.to_json(),
                        "neighbours": [m.to_json() for m in hit.neighbours],
                    }
                    for hit in hits
                ],
            }
        )

    async def events(request: Request) -> Response:
        raw = request.query_params.get("session")
        session_id = None
        if raw is not None:
            try:
                session_id = check_session_id(raw)
            except (TypeError, ValueError) as exc:
                raise BadRequest(str(exc)) from None

        async def stream() -> AsyncIterator[dict[str, str]]:
            async with state.broker.subscribe(session_id) as subscription:
                yield {"event": "ready", "data": json.dumps({"session_id": session_id})}
                while True:
                    event = await subscription.queue.get()
                    yield {
                        "event": event.name,
                        "data": json.dumps({"session_id": event.session_id}),
                    }

        return EventSourceResponse(stream(), ping=PING_SECONDS)

    page_html = resources.files("aalis_plugin_serve").joinpath("static/index.html").read_text()

    async def page(request: Request) -> Response:
        try:
            state.guard.check_host(request)
        except Denied as exc:
            return _error(exc.status, exc.message)
        token = request.query_params.get("token")
        if token is not None:
            # The address printed by `aalis serve` carries the token once; the page keeps
            # it in a cookie that scripts cannot read and other sites never send.
            if not state.guard.valid(token):
                return _error(401, "that token is not this server's")
            response: Response = RedirectResponse("/", status_code=303)
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            return response
        return HTMLResponse(
            page_html,
            headers={
                "Content-Security-Policy": "default-src 'self'; style-src 'self'; "
                "script-src 'self'; connect-src 'self'; img-src 'self' data:; "
                "frame-ancestors 'none'",
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
            },
        )

    routes = [
        Route("/", page),
        Route("/api/sessions", _guarded(state, sessions)),
        Route("/api/sessions/{session_id:path}/history", _guarded(state, history)),
        Route("/api/sessions/{session_id:path}/full", _guarded(state, full)),
        Route("/api/sessions/{session_id:path}/summary", _guarded(state, summary)),
        Route(
            "/api/sessions/{session_id:path}/clear",
            _guarded(state, clear, write=True),
            methods=["POST"],
        ),
        Route(
            "/api/sessions/{session_id:path}/compress",
            _guarded(state, compress, write=True),
            methods=["POST"],
        ),
        Route(
            "/api/sessions/{session_id:path}/undo",
            _guarded(state, undo, write=True),
            methods=["POST"],
        ),
        Route("/api/sessions/{session_id:path}/undo", _guarded(state, undo_plan)),
        Route("/api/sessions/{session_id:path}/persons", _guarded(state, persons)),
        Route("/api/sessions/{session_id:path}/facts", _guarded(state, facts)),
        Route(
            "/api/facts/{fact_id}/edit", _guarded(state, fact_edit, write=True), methods=["POST"]
        ),
        Route(
            "/api/facts/{fact_id}/retract",
            _guarded(state, fact_retract, write=True),
            methods=["POST"],
        ),
        Route("/api/forget", _guarded(state, forget, write=True), methods=["POST"]),
        Route("/api/recall", _guarded(state, recall_search)),
        Route("/api/metadata", _guarded(state, namespaces)),
        Route("/api/metadata/{namespace}", _guarded(state, namespace)),
        Route("/api/clear-types", _guarded(state, types)),
        Route("/api/events", _guarded(state, events)),
        Mount(
            "/static",
            StaticFiles(packages=[("aalis_plugin_serve", "static")]),
            name="static",
        ),
    ]
    app = Starlette(routes=routes)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, f"no such endpoint: {request.url.path}")

    app.add_exception_handler(404, not_found)
    return BodyLimit(app, state.config.max_body_bytes)


__all__ = ["MAX_PAGE", "ServeState", "create_app"]
