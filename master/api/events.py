"""``GET /events``: the master event bus as Server-Sent Events, filtered to what a token may see.

Runs on ``briny-api``'s loop, with one thread per stream reading the bus
(:class:`briny.common.event.EventListener`, every tag) and handing events to the loop. The
stream is Salt's: ``retry: 400`` first, then per event ``tag: <tag>`` and
``data: {"tag": <tag>, "data": <data>}`` (JSON) and a blank line.

What a token sees (Salt shows every event to any token; briny filters, as the ACL is the
contract): a user allowed every function everywhere and every runner and wheel function
(:func:`briny.master.eauthacl.sees_everything`) sees the whole bus; any other user sees the
``salt/job/<jid>/...`` events of jobs whose function their ACL allows on that minion (a
``new`` event: on every targeted minion), ``salt/run/...`` and ``salt/wheel/...`` events of
functions their ``@runner`` / ``@wheel`` entries allow, and nothing else.

A client that reads slower than the bus fills its queue (``MAX_QUEUED`` events); past that the
stream ends with a log line rather than holding memory for it (the client reconnects, as
``retry`` tells it), and the API keeps serving everyone else. At most ``thread_pool`` streams are open at once (each holds a thread); one more is a 503.
A client that leaves is noticed
at the next event, or within ``GONE_CHECK`` seconds on a quiet bus: its thread stops. Every
``TOKEN_CHECK`` seconds a stream looks its token up again: once logged out or expired, the
stream ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

from aiohttp import web

from briny.common.event import DROPPED_TAG, READY_PREFIX, EventListener
from briny.common.exceptions import ApiError
from briny.master import eauthacl as acl
from briny.master.api.lowstate import Caller

log = logging.getLogger(__name__)

MAX_QUEUED = 10000
GONE_CHECK = 1.0  # seconds: how often a stream on a quiet bus checks that its client is still there
TOKEN_CHECK = 60.0  # seconds: how often a stream checks that its token still lives (logout, expiry)
READY_WAIT = 5.0  # seconds a stream's listener waits to join the bus before it streams anyway
_END = None


def visible(caller: Caller, everything: bool, tag: str, data: dict[str, Any]) -> bool:
    """True when ``caller`` may see this event (see the module docstring)."""
    if tag.startswith(READY_PREFIX):
        return False
    if everything:
        return True
    parts = tag.split("/")
    fun = str(data.get("fun") or "")
    if tag.startswith("salt/job/") and len(parts) >= 4 and fun:
        if parts[3] == "new":
            return acl.allows_local(caller.perms, fun, [str(m) for m in data.get("minions") or []])
        minion = str(data.get("id") or (parts[4] if len(parts) > 4 else ""))
        return bool(minion) and acl.allows_local(caller.perms, fun, [minion])
    for prefix, kind in (("salt/run/", "@runner"), ("salt/wheel/", "@wheel")):
        if tag.startswith(prefix) and fun:
            return acl.allows_special(caller.perms, kind, fun.partition(".")[2])
    return tag == DROPPED_TAG


class Backlog:
    """How many events a stream's pump handed to the loop that the stream has not taken yet,
    handed over or still pending as ``call_soon_threadsafe`` callbacks (which the queue's
    ``qsize`` does not see). The pump adds (:meth:`add`), the stream on the loop takes
    (:meth:`take`); a lock between them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self._lock = threading.Lock()

    def add(self) -> bool:
        """Count one more event; False (nothing counted) when ``limit`` are waiting already."""
        with self._lock:
            if self.count >= self.limit:
                return False
            self.count += 1
            return True

    def take(self) -> None:
        with self._lock:
            self.count -= 1


def _pump(opts: dict[str, Any], loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Any], backlog: Backlog,
          stop: threading.Event, ready: threading.Event) -> None:  # fmt: skip
    """The stream's thread: bus events into ``queue`` until ``stop`` (or ``backlog`` is full)."""
    listener = EventListener(opts, "*", name="master")
    try:
        listener.wait_ready(timeout=READY_WAIT)
        ready.set()
        while not stop.is_set():
            event = listener.get_event(timeout=0.5)
            if event is None:
                continue
            if not backlog.add():
                log.warning("api: an /events client fell %d events behind; its stream ends", backlog.limit)
                loop.call_soon_threadsafe(queue.put_nowait, _END)
                return
            loop.call_soon_threadsafe(queue.put_nowait, event)
    finally:
        ready.set()
        listener.close()


async def events(request: web.Request, caller: Caller, token: str) -> web.StreamResponse:
    """``GET /events`` for ``caller`` (the app checked the token: :func:`briny.master.api.app.caller_of`)."""
    api = request.app["api"]
    if api.streams >= api.settings.thread_pool:
        log.warning("api: /events of %s refused: %d streams are open (thread_pool)", caller.user, api.streams)
        raise ApiError(503, f"Too many event streams open ({api.streams}); try again later")
    api.streams += 1
    try:
        return await _stream(request, api, caller, token)
    finally:
        api.streams -= 1


async def _stream(request: web.Request, api: Any, caller: Caller, token: str) -> web.StreamResponse:
    everything = acl.sees_everything(caller.perms)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream;charset=utf-8",
                                           "Cache-Control": "no-cache", "Connection": "keep-alive"})  # fmt: skip
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop, ready = threading.Event(), threading.Event()
    backlog = Backlog(MAX_QUEUED)
    thread = threading.Thread(target=_pump, args=(api.opts, loop, queue, backlog, stop, ready), name="api-events",
                              daemon=True)  # fmt: skip
    try:  # opened before the thread starts: whatever ends this handler (a client gone, a cancel) stops it
        thread.start()
        await loop.run_in_executor(None, ready.wait, READY_WAIT + 1)
        log.info("api: %s follows /events%s", caller.user, "" if everything else " (filtered by its ACL)")
        await response.prepare(request)
        await response.write(b"retry: 400\n\n")
        checked = loop.time()
        while True:
            if loop.time() - checked >= TOKEN_CHECK:
                checked = loop.time()
                if await api.blocking(api.tokens.get, token) is None:
                    log.info("api: the /events stream of %s ends: its token was logged out or expired", caller.user)
                    break
            try:
                item = await asyncio.wait_for(queue.get(), GONE_CHECK)
            except TimeoutError:  # a quiet bus: has the client gone?
                if request.transport is None or request.transport.is_closing():
                    break
                continue
            if item is _END:
                break
            backlog.take()
            tag, data = item
            if not visible(caller, everything, tag, data):
                continue
            data = {k: v for k, v in data.items() if k != "_seq"}
            body = json.dumps({"tag": tag, "data": data}, default=str)
            await response.write(f"tag: {tag}\ndata: {body}\n\n".encode())
    except (ConnectionResetError, asyncio.CancelledError):
        log.debug("api: an /events client of %s went away", caller.user)
        raise
    finally:
        stop.set()
    return response
