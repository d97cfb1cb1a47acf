"""The routes of ``briny-api`` (Salt's ``rest_cherrypy`` URLs) on an aiohttp application.

Runs on ``briny-api``'s loop; every call that blocks (PAM, the token files, the master's IPC,
runners) runs in the API's thread pool (``thread_pool``). :func:`make_app` builds the
application for an :class:`Api` (the master's opts, the settings, the token store). Routes:
``GET /`` (the clients), ``POST /`` (a lowstate, token), ``POST /login``, ``GET|POST /logout``,
``GET /minions[/id]``, ``POST /minions``, ``GET /jobs[/jid]``, ``POST /run`` (credentials in
each chunk), ``GET /events`` (:mod:`.events`), ``POST <webhook_url>/<tag>``, ``GET /stats``,
and ``static`` / ``app`` when configured. A token comes in the ``X-Auth-Token`` header or the
``session_id`` cookie that ``/login`` sets (``/events`` also takes ``?token=``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from briny.common.event import EventSender, stamp
from briny.common.ratelog import LogThrottle, short
from briny.common.exceptions import ApiError
from briny.master import eauthacl as acl
from briny.master.api import eauth, lowstate, web as webio
from briny.master.api import events as event_stream
from briny.master.api.settings import ApiSettings
from briny.master.api.tokens import TokenStore

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
NO_TOKEN = "No permission -- see authorization schemes"  # noqa: S105 - a message, not a secret
BAD_LOGIN = "Could not authenticate using provided credentials"


@dataclass
class Api:
    opts: dict[str, Any]
    settings: ApiSettings
    tokens: TokenStore
    executor: concurrent.futures.ThreadPoolExecutor
    started: float = field(default_factory=time.time)
    requests: int = 0
    refused: int = 0
    streams: int = 0  # open /events streams (each holds a thread): at most settings.thread_pool
    # lines any peer can cause, one throttle per kind (common/ratelog.py): at most one a second each
    warn_refused: LogThrottle = field(default_factory=lambda: LogThrottle(log))  # an ApiError answered
    warn_no_token: LogThrottle = field(default_factory=lambda: LogThrottle(log))  # no or a dead token
    warn_login: LogThrottle = field(default_factory=lambda: LogThrottle(log))  # a refused login

    async def blocking(self, func: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.executor, functools.partial(func, *args))


def _api(request: web.Request) -> Api:
    api: Api = request.app["api"]
    return api


def _allow(*methods: str) -> str:
    return ", ".join(sorted({*methods, "HEAD"} if "GET" in methods else set(methods)))


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """ApiError and aiohttp's own refusals as Salt's error pages; anything else a logged 500."""
    api = _api(request)
    api.requests += 1
    allow = getattr(handler, "allow", None)
    try:
        response = await handler(request)
    except ApiError as exc:
        api.refused += 1
        if exc.status not in (401, 403):  # refusals of a user are logged where the user is known
            api.warn_refused.note("api: %s %s from %s refused: %d %s", request.method, short(request.path),
                                  request.remote, exc.status, short(exc.message, 160))  # fmt: skip
        return webio.error(exc.status, exc.message, allow)
    except web.HTTPException as exc:
        if exc.status >= 400:
            return webio.error(exc.status, exc.reason, exc.headers.get("Allow"))
        raise
    except Exception:  # one request's failure must not take the API down; logged
        log.exception("api: %s %s failed", request.method, request.path)
        return webio.error(500, "The server encountered an unexpected condition which prevented it from "
                                "fulfilling the request.", allow)  # fmt: skip
    if allow and "Allow" not in response.headers:
        response.headers["Allow"] = allow
    return response


def _allowing(*methods: str) -> Callable[[Handler], Handler]:
    def mark(func: Handler) -> Handler:
        setattr(func, "allow", _allow(*methods))
        return func

    return mark


def token_of(request: web.Request, query: bool = False) -> str | None:
    token = request.headers.get("X-Auth-Token") or request.cookies.get("session_id")
    if not token and query:
        token = request.query.get("token") or request.query.get("salt_token")
    return token or None


async def caller_of(request: web.Request, query: bool = False) -> lowstate.Caller:
    """The caller of a token request; ApiError 401 (Salt's message) without a live token."""
    api = _api(request)
    token = token_of(request, query)
    record = await api.blocking(api.tokens.get, token) if token else None
    if record is None:
        api.warn_no_token.note("api: refused %s %s from %s: %s", request.method, short(request.path),
                               request.remote, "an unknown or expired token" if token else "no token")  # fmt: skip
        raise ApiError(401, NO_TOKEN)
    return lowstate.Caller(str(record.get("user")), str(record.get("eauth")), list(record.get("perms") or []))


def _login_perms(api: Api, eauth_name: str, username: str, password: str) -> tuple[list[Any], list[str]] | None:
    """The ACL entries and groups of a user whose password is right; None (logged) otherwise."""
    config = api.opts.get("external_auth") or {}
    if eauth_name not in eauth.BACKENDS or eauth_name not in config:
        api.warn_login.note("api: login of %r refused: eauth %r is not configured (external_auth has %s; briny has %s)",
                            short(username), short(eauth_name), ", ".join(map(str, config)) or "nothing",
                            ", ".join(eauth.BACKENDS))  # fmt: skip
        return None
    if not eauth.authenticate(api.opts, eauth_name, username, password):
        api.warn_login.note("api: login of %r (eauth %s) refused: wrong password or unknown user", short(username),
                            eauth_name)  # fmt: skip
        return None
    groups = eauth.groups(eauth_name, username)
    perms = acl.perms_for(api.opts, eauth_name, username, groups)
    if perms is None:
        api.warn_login.note("api: login of %r (eauth %s) refused: no external_auth entry names the user or their groups",
                            short(username), eauth_name)  # fmt: skip
        return None
    return perms, groups


def _ordered(perms: list[Any]) -> list[Any]:
    """Salt's order of ``perms`` in a login's answer: the plain entries sorted, then the maps."""
    return sorted({p for p in perms if isinstance(p, str)}) + [p for p in perms if not isinstance(p, str)]


def _credentials(data: Any) -> tuple[str, str, str]:
    """Username, password and eauth of a login body; "" for any that is missing or not text."""
    if not isinstance(data, dict):
        return "", "", ""

    def text(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    return text("username"), text("password"), text("eauth")


# -- routes -----------------------------------------------------------------------------------


@_allowing("GET", "POST")
async def index(request: web.Request) -> web.StreamResponse:
    if request.method == "GET":
        return webio.render(request, {"return": "Welcome", "clients": list(lowstate.CLIENTS)})
    api = _api(request)
    caller = await caller_of(request)
    chunks = webio.lowstate(await webio.read_body(request))
    return webio.render(request, {"return": await _run(api, chunks, lambda chunk: caller)})


async def _run(api: Api, chunks: list[dict[str, Any]], who: Callable[[dict[str, Any]], lowstate.Caller]) -> list[Any]:
    for chunk in chunks:  # every chunk's client checked before any runs
        try:
            lowstate.check_client(chunk, api.settings.enabled_clients)
        except ApiError as exc:
            lowstate.refuse(who(chunk), f"client {str(chunk.get('client'))[:40]!r}", exc.message)
            raise
    out = []
    for chunk in chunks:
        out.append(await api.blocking(lowstate.run_chunk, api, chunk, who(chunk)))
    return out


@_allowing("GET", "POST")
async def login(request: web.Request) -> web.StreamResponse:
    api = _api(request)
    if request.method == "GET":
        return webio.render(request, {"status": "401 Unauthorized", "return": "Please log in"}, status=401,
                            headers={"WWW-Authenticate": "Session"})  # fmt: skip
    username, password, eauth_name = _credentials(await webio.read_body(request))
    found = await api.blocking(_login_perms, api, eauth_name, username, password)
    if found is None:
        api.refused += 1
        raise ApiError(401, BAD_LOGIN)
    perms, groups = found
    record = {"user": username, "eauth": eauth_name, "perms": perms, "groups": groups}
    full = await api.blocking(api.tokens.create, record, api.settings.token_expire)
    log.info("api: %s logged in (eauth %s)", username, eauth_name)
    body = {"return": [{"token": full["token"], "expire": full["expire"], "start": full["start"], "user": username,
                        "eauth": eauth_name, "perms": _ordered(perms)}]}  # fmt: skip
    response = webio.render(request, body, headers={"X-Auth-Token": full["token"]})
    response.set_cookie("session_id", full["token"], path="/", httponly=True, samesite="Strict",
                        secure=not api.settings.disable_ssl, max_age=int(api.settings.token_expire))  # fmt: skip
    return response


@_allowing("GET", "POST")
async def logout(request: web.Request) -> web.StreamResponse:
    api = _api(request)
    caller = await caller_of(request)
    await api.blocking(api.tokens.remove, token_of(request))
    log.info("api: %s logged out", caller.user)
    response = webio.render(request, {"return": "Your token has been cleared"})
    response.del_cookie("session_id", path="/")
    return response


@_allowing("GET", "POST")
async def minions(request: web.Request) -> web.StreamResponse:
    api = _api(request)
    caller = await caller_of(request)
    if request.method == "GET":
        chunk = {"client": "local", "tgt": request.match_info.get("mid") or "*", "fun": "grains.items"}
        return webio.render(request, {"return": await _run(api, [chunk], lambda _c: caller)})
    chunks = webio.lowstate(await webio.read_body(request))
    for chunk in chunks:
        chunk["client"] = "local_async"
    returns = await _run(api, chunks, lambda _c: caller)
    links = [{"href": f"/jobs/{r['jid']}"} for r in returns if isinstance(r, dict) and r.get("jid")]
    return webio.render(request, {"return": returns, "_links": {"jobs": links}}, status=202)


@_allowing("GET", "POST")
async def jobs(request: web.Request) -> web.StreamResponse:
    api = _api(request)
    caller = await caller_of(request)
    jid = request.match_info.get("jid")
    if not jid:
        chunk = {"client": "runner", "fun": "jobs.list_jobs"}
        return webio.render(request, {"return": await _run(api, [chunk], lambda _c: caller)})
    chunk = {"client": "runner", "fun": "jobs.list_job", "jid": jid}
    info = (await _run(api, [chunk], lambda _c: caller))[0]
    result = info.get("Result", {}) if isinstance(info, dict) else {}
    returns = {m: r.get("return") if isinstance(r, dict) else r for m, r in result.items()}
    return webio.render(request, {"info": [info], "return": [returns]})


@_allowing("GET", "POST")
async def run(request: web.Request) -> web.StreamResponse:
    """Lowstate with credentials in each chunk (``username`` / ``password`` / ``eauth``, or ``token``)."""
    api = _api(request)
    chunks = webio.lowstate(await webio.read_body(request))
    callers: list[lowstate.Caller] = []
    for chunk in chunks:
        token = chunk.get("token")
        if token:
            record = await api.blocking(api.tokens.get, token)
            if record is None:
                api.warn_no_token.note("api: /run refused: an unknown or expired token")
                raise ApiError(401, "Authentication error occurred.")
            callers.append(lowstate.Caller(str(record["user"]), str(record["eauth"]), list(record.get("perms") or [])))
            continue
        username, password, eauth_name = _credentials(chunk)
        found = await api.blocking(_login_perms, api, eauth_name, username, password)
        if found is None:
            raise ApiError(401, "Authentication error occurred.")
        callers.append(lowstate.Caller(username, eauth_name, found[0], via="eauth"))
    by_chunk = {id(c): who for c, who in zip(chunks, callers)}
    return webio.render(request, {"return": await _run(api, chunks, lambda chunk: by_chunk[id(chunk)])})


@_allowing("POST")
async def hook(request: web.Request) -> web.StreamResponse:
    api = _api(request)
    user = "(webhook_disable_auth)"
    if not api.settings.webhook_disable_auth:
        user = (await caller_of(request)).user
    raw = await request.read() if request.can_read_body else b""
    post = await webio.read_body(request) if raw else None
    tag = "salt/netapi/hook" + ("/" + request.match_info["tag"] if request.match_info.get("tag") else "")
    headers = {k: v for k, v in request.headers.items() if k.lower() not in ("x-auth-token", "cookie")}
    data = {"body": raw.decode("utf-8", "replace"), "post": post, "headers": headers, "_stamp": stamp()}
    await api.blocking(_fire, api.opts, tag, data)
    log.info("api: webhook %s fired by %s", tag, user)
    return webio.render(request, {"success": True})


def _fire(opts: dict[str, Any], tag: str, data: dict[str, Any]) -> None:
    sender = EventSender(opts, "master")
    try:
        sender.fire(tag, data)
    finally:
        sender.close()


@_allowing("GET")
async def stats(request: web.Request) -> web.StreamResponse:
    api = _api(request)
    if not api.settings.stats_disable_auth:
        await caller_of(request)
    now = time.time()
    body = {"briny-api": {"Start Time": api.started, "Uptime": now - api.started, "Requests": api.requests,
                          "Refused": api.refused, "Thread Pool": api.settings.thread_pool,
                          "Event Streams": api.streams}}  # fmt: skip
    return webio.render(request, body)


def _app_page(path: str) -> Handler:
    async def serve(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(path)

    return serve


class AccessLogger(AbstractAccessLogger):
    """One line per request: peer, method, path (never the query string: ``/events?token=``),
    status, size, time."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info("%s %s %s %d %d %.3fs", request.remote, request.method, request.path, response.status,
                         response.body_length, time)  # fmt: skip


async def events(request: web.Request) -> web.StreamResponse:
    caller = await caller_of(request, query=True)
    return await event_stream.events(request, caller, token_of(request, query=True) or "")


def make_app(api: Api) -> web.Application:
    app = web.Application(middlewares=[errors], client_max_size=api.settings.max_request_body_size)
    app["api"] = api
    app["settings"] = api.settings
    r = app.router
    r.add_route("GET", "/", index)
    r.add_route("POST", "/", index)
    for method in ("GET", "POST"):
        r.add_route(method, "/login", login)
        r.add_route(method, "/logout", logout)
        r.add_route(method, "/minions", minions)
    r.add_route("GET", "/jobs", jobs)
    r.add_route("POST", "/run", run)
    r.add_route("GET", "/minions/{mid}", minions)
    r.add_route("GET", "/jobs/{jid}", jobs)
    r.add_route("GET", "/events", events)
    r.add_route("GET", "/stats", stats)
    r.add_route("POST", api.settings.webhook_url, hook)
    r.add_route("POST", api.settings.webhook_url + "/{tag:.+}", hook)
    if api.settings.static:
        r.add_static(api.settings.static_path, os.path.abspath(api.settings.static), follow_symlinks=False)
    if api.settings.app:
        page = os.path.abspath(api.settings.app)
        r.add_route("GET", api.settings.app_path, _app_page(page))
        r.add_route("GET", api.settings.app_path + "/{rest:.*}", _app_page(page))
    return app
