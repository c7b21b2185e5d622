"""The ASGI application of ``mauscheln serve`` (Starlette): the page, the JSON API, the replays.

Routes (``docs/web.md`` shows a session through them):

============================================  ==================================================================
``GET /``                                     the page: choose a table, then play it
``GET /api/options``                          rulesets, presets, agents and the server's bounds
``POST /api/tables``                          ``{ruleset, players, seat, agents, seed, deals, rules}`` ->
                                              ``{table, token, view}``
``GET /api/tables/{table}?token=T``           the seat's view
``POST /api/tables/{table}/act``              ``{token, action}`` -> the new view
``GET /api/tables/{table}/replay?token=T``    the finished session with every hand (JSON)
``GET /tables/{table}/replay?token=T``        the same in the replay viewer
``GET /replay``                               the benchmark records; ``?record=TABLE/AGENT[&deal=K]`` their games
============================================  ==================================================================

A token may also come as ``Authorization: Bearer T`` or, in a POST, as ``token`` in
the body. Every refusal is a JSON object ``{"error": message, "status": code, ...}``
(an HTML page for the HTML routes) naming what is allowed; a request body is read up
to :attr:`~mauscheln.web.tables.Settings.max_body` bytes. Bots play in worker threads
(at most one request works on a table at a time, a second one is answered 429), so a
slow bot never holds up the other tables.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from importlib import resources
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents.base import available_agents
from mauscheln.web import pages
from mauscheln.web.tables import (
    NEW_TABLE_KEYS,
    Settings,
    TableStore,
    WebError,
    WebTable,
    parse_new_table,
    ruleset_choices,
)

log = logging.getLogger("mauscheln.web")
PAGE_HEADERS = {  # the table page: its own script and style only; no framing; the token stays out of referrers
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
                               "form-action 'self'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
INLINE_HEADERS = {  # the viewer and error pages carry their script, style and data inline and fetch nothing
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                               "img-src data:; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
ACT_KEYS = ("token", "action")
API_ROUTES = ("GET /api/options", "POST /api/tables", "GET /api/tables/{table}", "POST /api/tables/{table}/act",
              "GET /api/tables/{table}/replay")


def create_app(settings: Settings | None = None) -> Starlette:
    """The application with its own table store; ``settings`` bound it (default: :class:`Settings`)."""
    settings = (settings or Settings()).check()
    store = TableStore(settings)
    limiter = anyio.CapacityLimiter(settings.max_tables + 4)  # a worker for every table, a few for the replays
    static = resources.files("mauscheln.web") / "static"

    async def in_thread(fn: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(fn, limiter=limiter)

    async def with_table(table: WebTable, work: Callable[[], Any]) -> Any:
        """Run ``work`` in a worker thread while holding the table (429 when another request holds it)."""
        if not table.lock.acquire(blocking=False):
            raise WebError(429, "the table is busy with another request (one request at a time per table); "
                                "allowed: retry when it has answered", retry_after=1)
        try:
            return await in_thread(work)
        finally:
            table.last_used = store.clock()
            table.lock.release()

    # ------------------------------------------------------------------ API
    async def options(request: Request) -> Response:
        choices = await in_thread(ruleset_choices)
        agents = {name: {"doc": doc} for name, doc in available_agents().items()}
        return JSONResponse({**choices, "agents": agents, "defaults": {
            "ruleset": "mauscheln", "players": None, "seat": 0, "agents": ["expert"], "seed": None, "deals": 3},
            "limits": {"max_tables": settings.max_tables, "idle_seconds": settings.idle_seconds,
                       "max_body": settings.max_body, "max_deals": settings.max_deals,
                       "max_spec": settings.max_spec, "remote_agents": settings.allow_remote,
                       "code_agents": settings.allow_code}})

    async def create(request: Request) -> Response:
        body = await read_json(request, settings.max_body, NEW_TABLE_KEYS)
        new = parse_new_table(body, settings)
        store.reserve()
        table = None

        def build() -> tuple[WebTable, dict[str, Any]]:
            made = WebTable.open(new, settings, store.clock())
            return made, made.view()

        try:
            table, view = await in_thread(build)
        finally:
            store.add(table)
        return JSONResponse({"table": table.id, "token": table.token, "view": view}, status_code=201)

    async def show(request: Request) -> Response:
        table = store.get(request.path_params["table"], token_of(request))
        view = await with_table(table, lambda: _checked(table).view())
        return JSONResponse(view)

    async def act(request: Request) -> Response:
        table_id = request.path_params["table"]
        body = await read_json(request, settings.max_body, ACT_KEYS)
        if not isinstance(body, dict):
            raise WebError(422, f"the body is a JSON {type(body).__name__}; allowed: a JSON object "
                                "{\"token\": ..., \"action\": ...}")
        unknown = sorted(str(k) for k in body if k not in ACT_KEYS)
        if unknown:
            raise WebError(422, f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(ACT_KEYS)}")
        table = store.get(table_id, body.get("token") or token_of(request))
        if "action" not in body:
            raise WebError(422, "the body has no action; allowed: {\"token\": ..., \"action\": one of the legal "
                                "moves as text (the view's legal list)}")

        def work() -> dict[str, Any]:
            table.act(body["action"])
            return table.view()

        return JSONResponse(await with_table(table, work))

    async def replay_json(request: Request) -> Response:
        table = store.get(request.path_params["table"], token_of(request))
        return JSONResponse(await with_table(table, table.replay))

    # ------------------------------------------------------------------ pages
    async def index(request: Request) -> Response:
        return HTMLResponse((static / "index.html").read_text(encoding="utf-8"), headers=PAGE_HEADERS)

    async def replay_page(request: Request) -> Response:
        table = store.get(request.path_params["table"], token_of(request))
        replay = await with_table(table, table.replay)
        return HTMLResponse(pages.session_page(table.game, replay, table.id), headers=INLINE_HEADERS)

    async def records_page(request: Request) -> Response:
        record, deal = request.query_params.get("record"), request.query_params.get("deal")
        if record is None:
            if deal is not None:
                raise WebError(422, "deal needs a record; allowed: /replay?record=TABLE/AGENT&deal=K")
            return HTMLResponse(await in_thread(lambda: pages.records_index(settings.db)), headers=INLINE_HEADERS)
        return HTMLResponse(await in_thread(lambda: pages.record_page(settings.db, record, deal)),
                            headers=INLINE_HEADERS)

    # ------------------------------------------------------------------ errors
    def refusal(request: Request, status: int, message: str, extra: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message, "status": status, **(extra or {})}, status_code=status,
                                headers=headers)
        return HTMLResponse(pages.error_page(status, message), status_code=status,
                            headers={**INLINE_HEADERS, **(headers or {})})

    async def on_web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        headers = {}
        if exc.status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="mauscheln"'
        if "retry_after" in exc.extra:
            headers["Retry-After"] = str(exc.extra["retry_after"])
        return refusal(request, exc.status, str(exc), exc.extra, headers)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            message = (f"no such address {request.url.path!r}; allowed: / (the page), /replay, and the API: "
                       + ", ".join(API_ROUTES))
        elif exc.status_code == 405:
            message = (f"{request.method} is not allowed on {request.url.path}; allowed: "
                       f"{(exc.headers or {}).get('Allow', 'GET')}")
        else:
            message = str(exc.detail)
        return refusal(request, exc.status_code, message, headers=dict(exc.headers or {}))

    async def on_crash(request: Request, exc: Exception) -> Response:
        log.exception("request %s %s failed", request.method, request.url.path)
        return refusal(request, 500, "the server failed on this request (its log has the details)")

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/tables", create, methods=["POST"]),
        Route("/api/tables/{table}", show),
        Route("/api/tables/{table}/act", act, methods=["POST"]),
        Route("/api/tables/{table}/replay", replay_json),
        Route("/tables/{table}/replay", replay_page),
        Route("/replay", records_page),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={WebError: on_web_error, HTTPException: on_http_error,
                                                       Exception: on_crash})
    app.state.store = store
    app.state.settings = settings
    return app


def _checked(table: WebTable) -> WebTable:
    table.check_open()
    return table


def token_of(request: Request) -> str | None:
    """The token of a request: ``?token=``, else ``Authorization: Bearer ...``."""
    token = request.query_params.get("token")
    if token is None:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            token = value.strip()
    return token


async def read_json(request: Request, limit: int, keys: tuple[str, ...]) -> Any:
    """The JSON body of a request, read up to ``limit`` bytes: 413 past it, 400 when it is not JSON."""
    allowed = f"a JSON object with the keys {', '.join(keys)}"
    length = request.headers.get("content-length")
    if length is not None and length.isascii() and length.isdigit() and (len(length) > 18 or int(length) > limit):
        shown = length if len(length) <= 18 else f"{length[:12]}... ({len(length)} digits)"
        raise WebError(413, f"the body has {shown} bytes; allowed: at most {limit} bytes ({allowed})", limit=limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise WebError(413, f"the body has more than {limit} bytes; allowed: at most {limit} bytes ({allowed})",
                           limit=limit)
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WebError(400, f"the body is not JSON ({_reason(exc)}); allowed: {allowed}") from exc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _reason(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return " ".join(str(exc).split())[:120]


__all__ = ["create_app", "read_json", "token_of"]
