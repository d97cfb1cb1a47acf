"""briny-api against hostile peers, in process (aiohttp's test server on 127.0.0.1, no master):
alias bombs in YAML bodies, log floods, odd usernames, /events streams that outlive their client
or their token."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request

from briny.common.event import EventBus, EventSender
from briny.master.api import eauth, settings
from briny.master.api import events as event_stream
from briny.master.api.app import Api, make_app
from briny.master.api.lowstate import Caller
from briny.master.api.tokens import TokenStore
from tests.waiting import until

ACL = {"^filename": "", "^filetype": "text", "^hashtype": "plaintext", "alice": [".*", "@runner", "@wheel"]}


def _api(tmp: Path) -> Api:
    htpasswd = tmp / "htpasswd"
    htpasswd.write_text("alice:pw\n")
    opts: dict[str, Any] = {
        "cachedir": str(tmp / "cache"),
        "sock_dir": str(tmp / "sock"),
        "external_auth": {"file": {**ACL, "^filename": str(htpasswd)}},
        "netapi_enable_clients": ["local", "runner"],
        "rest_cherrypy": {"port": 8000, "host": "127.0.0.1", "disable_ssl": True, "thread_pool": 4},
    }
    s = settings.load(opts)
    return Api(opts, s, TokenStore(opts), concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="api"))


@contextlib.asynccontextmanager
async def _client(api: Api) -> AsyncIterator[TestClient[Any, Any]]:
    client: TestClient[Any, Any] = TestClient(TestServer(make_app(api), host="127.0.0.1"))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()
        api.executor.shutdown(wait=False, cancel_futures=True)


def _run(tmp: Path, body: Callable[[Api, TestClient[Any, Any]], Awaitable[None]], timeout: float = 30.0) -> None:
    async def main() -> None:
        api = _api(tmp)
        async with _client(api) as client:
            await asyncio.wait_for(body(api, client), timeout)

    asyncio.run(main())


# a "billion laughs": 342 bytes of nested aliases, 9 levels of 9: 387 million leaves once walked
BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{n}: &{n} [{','.join(['*' + p] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi")]
    + ["username: *i", "password: x", "eauth: file"]
)


def test_yaml_aliases_refused_before_anything_walks_them(tmp_path: Path) -> None:
    async def body(api: Api, client: TestClient[Any, Any]) -> None:
        yaml_type = {"Content-Type": "application/x-yaml"}
        mild = "username: &u alice\npassword: *u\neauth: file\n"
        for path in ("/login", "/run", "/"):
            for text in (mild, BOMB):
                resp = await client.post(path, data=text, headers=yaml_type)
                assert resp.status == 400 if path != "/" else 401, (path, text[:20], resp.status)
                if path != "/":
                    assert "Invalid YAML document" in await resp.text()
        # a body without aliases still loads; a username that is not text is no username
        resp = await client.post("/login", data="username: [alice]\npassword: pw\neauth: file\n", headers=yaml_type)
        assert resp.status == 401
        resp = await client.post("/login", data="username: alice\npassword: pw\neauth: file\n", headers=yaml_type)
        assert resp.status == 200, await resp.text()

    _run(tmp_path, body)


def test_refusals_any_peer_causes_are_throttled(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    long_name = "x" * 100_000

    async def body(api: Api, client: TestClient[Any, Any]) -> None:
        throttles = (api.warn_no_token, api.warn_login, api.warn_refused)
        for throttle in throttles:
            throttle.clock = lambda: 1000.0  # one instant, however long the run takes on a loaded machine
        for n in range(500):
            kind = n % 3
            if kind == 0:  # no token
                resp = await client.get("/jobs")
            elif kind == 1:  # a wrong login, with a long name
                resp = await client.post("/login", json={"username": long_name, "password": "no", "eauth": "file"})
            else:  # a body that does not parse
                resp = await client.post("/login", data="{" + long_name, headers={"Content-Type": "application/json"})
            assert resp.status in (400, 401)
            await resp.read()
        for throttle in throttles:
            throttle.clock = lambda: 1e12  # a second later: what was counted is written, with its count
            throttle.flush()

    with caplog.at_level(logging.WARNING, logger="briny.master.api.app"):
        _run(tmp_path, body)
    lines = [r.getMessage() for r in caplog.records if r.name == "briny.master.api.app"]
    # per kind: the first at once, then (the clock held still) nothing until the flush writes the rest
    assert len(lines) == 6, lines
    assert all(len(line) < 600 for line in lines), max(map(len, lines))
    assert sum(1 for line in lines if "in all)" in line) >= 3
    assert any("167 in all)" in line for line in lines) and any("166 in all)" in line for line in lines)


def _pumps() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "api-events")


ALICE = {"user": "alice", "eauth": "file", "perms": [".*", "@runner", "@wheel"]}


def test_events_client_gone_at_once_leaves_no_pump_thread(tmp_path: Path) -> None:
    async def body(api: Api, client: TestClient[Any, Any]) -> None:
        bus = EventBus(api.opts, name="master").start_thread()
        try:
            token = api.tokens.create(ALICE, 60)["token"]
            before = _pumps()
            for _ in range(5):
                reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
                writer.write(f"GET /events?token={token} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                await writer.drain()
                writer.close()
                await writer.wait_closed()
            await until(lambda: api.streams == 0 and _pumps() == before, 10, "the pump threads to end")
        finally:
            bus.stop()

    _run(tmp_path, body)


def test_events_handler_cancelled_while_joining_the_bus_stops_its_pump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_stream, "READY_WAIT", 0.5)  # no bus here: the listener gives up joining soon

    async def body(api: Api, client: TestClient[Any, Any]) -> None:
        before = _pumps()
        request = make_mocked_request("GET", "/events", app=client.server.app)
        caller = Caller("alice", "file", ALICE["perms"])
        task = asyncio.create_task(event_stream.events(request, caller, api.tokens.create(ALICE, 60)["token"]))
        await until(lambda: _pumps() > before, 5, "the stream's pump thread")
        task.cancel()  # the handler is still waiting for its listener to join the bus
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await until(lambda: api.streams == 0 and _pumps() == before, 5, "the pump thread to end")

    _run(tmp_path, body)


def test_username_with_nul_is_a_wrong_login_not_a_500(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # PAM is C: it sees "alice\0x" as "alice"; stand in for a PAM that accepts alice's password
    monkeypatch.setattr(eauth, "pam_authenticate", lambda user, password, service: user.split("\0")[0] == "alice")

    async def body(api: Api, client: TestClient[Any, Any]) -> None:
        api.opts["external_auth"]["pam"] = {"alice": [".*"], "alice\0x": [".*"]}
        for name in ("alice\0x", "alice\nx", "alice\x7f"):
            resp = await client.post("/login", json={"username": name, "password": "pw", "eauth": "pam"})
            assert resp.status == 401, (name, resp.status, await resp.text())
        resp = await client.post("/login", json={"username": "alice", "password": "pw", "eauth": "pam"})
        assert resp.status == 200

    _run(tmp_path, body)
    assert eauth.groups("pam", "root\0x") == []


def test_events_pump_ends_a_stream_at_max_queued_while_the_loop_is_busy(tmp_path: Path) -> None:
    """The loop does not run (as when it is busy): what the pump handed over waits in
    call_soon_threadsafe callbacks, not yet in the queue; MAX_QUEUED still holds."""
    api = _api(tmp_path)
    api.executor.shutdown()
    bus = EventBus(api.opts, name="master").start_thread()
    loop = asyncio.new_event_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop, ready = threading.Event(), threading.Event()
    backlog = event_stream.Backlog(5)
    thread = threading.Thread(target=event_stream._pump, args=(api.opts, loop, queue, backlog, stop, ready))
    thread.start()
    try:
        assert ready.wait(10)
        sender = EventSender(api.opts, "master")
        try:
            for n in range(20):
                sender.fire(f"burst/{n}", {"n": n})
        finally:
            sender.close()
        thread.join(10)
        assert not thread.is_alive(), "the pump should end its stream after 5 events waiting"
        loop.run_until_complete(asyncio.sleep(0))  # the callbacks run: the queue gets what was handed over
        items = [queue.get_nowait() for _ in range(queue.qsize())]
        assert items[-1] is None and len(items) == 6, items
    finally:
        stop.set()
        thread.join(10)
        loop.close()
        bus.stop()


def test_events_stream_ends_when_its_token_is_logged_out_or_expires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_stream, "TOKEN_CHECK", 0.2)
    monkeypatch.setattr(event_stream, "GONE_CHECK", 0.1)

    async def body(api: Api, client: TestClient[Any, Any]) -> None:
        bus = EventBus(api.opts, name="master").start_thread()
        try:
            for lifetime, logout in ((60.0, True), (1.5, False)):
                token = api.tokens.create(ALICE, lifetime)["token"]
                resp = await client.get("/events", params={"token": token})
                assert resp.status == 200
                assert await resp.content.readline() == b"retry: 400\n"
                if logout:
                    out = await client.post("/logout", headers={"X-Auth-Token": token})
                    assert out.status == 200
                await asyncio.wait_for(resp.content.read(), 5)  # the stream ends: EOF
                await until(lambda: api.streams == 0, 5, "the stream to close")
        finally:
            bus.stop()

    _run(tmp_path, body)
