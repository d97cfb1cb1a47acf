"""The transport seam: how master and minions move frames, and an in-memory fake.

Runs on the daemons' asyncio loops (``zmq.asyncio``); every coroutine here is
loop code and never blocks. Frames are opaque bytes (the envelope of
:mod:`wire`); this layer only routes them:

- requests go minion → master over DEALER → ROUTER, each tagged with an
  8-byte correlation id so replies may come back in any order;
  ``ClientTransport.request`` returns the reply frame or None on timeout;
- publishes go master → minions over PUB → SUB, each under a topic: a
  minion subscribes to :func:`topic_for` its own id only, so it never even
  receives another minion's jobs.

:class:`ZmqServer` / :class:`ZmqClient` are the real thing;
:class:`MemoryHub` gives connected fakes with the same interface, so master,
minion and bus logic can be tested in one process without sockets.
Oversized messages are refused by the socket (``MAXMSGSIZE``).

What the master's request socket may hold for its peers is bounded (``docs/PROTOCOL.md``, "Frame
limits"): at most ``send_hwm`` replies queued per connection (``ret_send_hwm``), and at most
``max_connections`` connections (``ret_max_connections``, :class:`briny.common.conncap.ConnectionCap`).
A reply to a connection whose queue is full (a peer that does not read) or that is gone is
dropped (``ROUTER_MANDATORY`` tells which), counted and reported once a second; a minion whose
reply was dropped asks again after its timeout, as for any lost reply.

The publish socket is bounded the same way: at most ``pub_hwm`` publishes queued per subscriber
connection (ZeroMQ's PUB drops, silently, a publish for a connection whose queue is full: a
subscriber that does not read) and at most ``pub_max_connections`` connections. A minion that
lost a publish gets it again after its next heartbeat (``docs/PROTOCOL.md``, "Publishes").
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Iterable
from typing import Protocol

import zmq
import zmq.asyncio

from .conncap import ConnectionCap
from .ratelog import LogThrottle
from .wire import MAX_FRAME

log = logging.getLogger(__name__)

SEND_HWM = 32  # replies queued per connection to the request port (as ret_send_hwm's default)
MAX_CONNECTIONS = 10000  # connections to the request port (as ret_max_connections's default)
PUB_HWM = 1000  # publishes queued per connection to the publish port (as pub_hwm's default, Salt's)
PUB_MAX_CONNECTIONS = 10000  # connections to the publish port (as pub_max_connections's default)


def topic_for(minion_id: str) -> bytes:
    """The publish topic of one minion (terminated, so ``web1`` never matches ``web10``)."""
    return b"m:" + minion_id.encode("utf-8") + b"\x00"


class ServerTransport(Protocol):
    async def recv(self) -> tuple[bytes, bytes, bytes]:
        """(peer, correlation id, frame) of the next request."""

    async def reply(self, peer: bytes, corr: bytes, frame: bytes) -> None: ...

    async def publish(self, topic: bytes, frame: bytes) -> None: ...

    def close(self) -> None: ...


class ClientTransport(Protocol):
    async def request(self, frame: bytes, timeout: float) -> bytes | None: ...

    async def recv_publish(self) -> tuple[bytes, bytes]:
        """(topic, frame) of the next publish for this client's subscriptions."""

    def subscribe(self, topic: bytes) -> None: ...

    def follow_publishes(self, port: int) -> None:
        """Take publishes from the master's ``port`` from now on (the one its auth names)."""

    def close(self) -> None: ...


async def await_reply(fut: asyncio.Future[bytes], timeout: float) -> bytes | None:
    """The reply ``fut`` brings, or None after ``timeout`` seconds.

    A cancellation always propagates, even when the reply lands in the same loop turn
    (Python 3.11's ``asyncio.wait_for`` would return the reply and swallow the cancel,
    and a task being stopped would carry on)."""
    try:
        async with asyncio.timeout(timeout):
            return await fut
    except TimeoutError:
        return None


# -- ZeroMQ --------------------------------------------------------------------


def _tcp(host: str, port: int) -> str:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"tcp://{host}:{port}"


class ZmqServer:
    """The master's ROUTER (requests) and PUB (publishes); see the module docstring for what each
    may hold. ``max_connections``, ``pub_max_connections`` None: no cap; ``sndbuf``: the kernel's
    send buffer per connection of both sockets in bytes (None: the system's, which grows as it
    needs)."""

    def __init__(
        self,
        interface: str,
        ret_port: int,
        publish_port: int,
        ctx: zmq.asyncio.Context | None = None,
        *,
        send_hwm: int = SEND_HWM,
        max_connections: int | None = MAX_CONNECTIONS,
        sndbuf: int | None = None,
        pub_hwm: int = PUB_HWM,
        pub_max_connections: int | None = PUB_MAX_CONNECTIONS,
    ) -> None:
        self.ctx = ctx or zmq.asyncio.Context.instance()
        self.router = self.ctx.socket(zmq.ROUTER)
        self.pub = self.ctx.socket(zmq.PUB)
        for sock in (self.router, self.pub):
            sock.setsockopt(zmq.LINGER, 1000)
            sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME + 1024)
            if ":" in interface:
                sock.setsockopt(zmq.IPV6, 1)
        self.pub.setsockopt(zmq.SNDHWM, max(1, pub_hwm))
        self.router.setsockopt(zmq.RCVHWM, 1000)
        self.router.setsockopt(zmq.SNDHWM, max(1, send_hwm))
        self.router.setsockopt(zmq.ROUTER_MANDATORY, 1)  # a reply it cannot queue raises, so it is counted
        if sndbuf is not None:
            self.router.setsockopt(zmq.SNDBUF, sndbuf)
            self.pub.setsockopt(zmq.SNDBUF, sndbuf)
        self.router.bind(_tcp(interface, ret_port))
        self.pub.bind(_tcp(interface, publish_port))
        self.queued = 0  # replies queued
        self.unread = 0  # replies dropped: the connection's queue was full (its peer does not read)
        self.gone = 0  # replies dropped: the connection had closed
        self._unread_warn = LogThrottle(log)
        self._parts_warn = LogThrottle(log)
        self._gone_log = LogThrottle(log, logging.DEBUG)
        self.cap: ConnectionCap | None = None
        self.pub_cap: ConnectionCap | None = None
        self._cap_tasks: list[asyncio.Task[None]] | None = None
        if max_connections is not None:
            self.cap = ConnectionCap(self.ctx, self.router, ret_port, max_connections)
        if pub_max_connections is not None:
            self.pub_cap = ConnectionCap(self.ctx, self.pub, publish_port, pub_max_connections, "pub_max_connections")

    async def recv(self) -> tuple[bytes, bytes, bytes]:
        if self._cap_tasks is None:  # the caps run on the loop that serves
            self._cap_tasks = [asyncio.ensure_future(c.run()) for c in (self.cap, self.pub_cap) if c is not None]
        while True:
            parts = await self.router.recv_multipart()
            if len(parts) == 3:
                return parts[0], parts[1], parts[2]
            self._parts_warn.note("dropped a request of %d parts (expected 3)", len(parts))

    async def reply(self, peer: bytes, corr: bytes, frame: bytes) -> None:
        """Queue a reply to ``peer`` without waiting; dropped (and counted) when its queue is full
        or it is gone."""
        try:
            await self.router.send_multipart([peer, corr, frame], flags=zmq.NOBLOCK)
            self.queued += 1
        except zmq.Again:
            self.unread += 1
            self._unread_warn.note(
                "dropped a reply of %d bytes to peer %s: %d replies it has not read are queued already (ret_send_hwm)",
                len(frame),
                peer.hex()[:16],
                self.router.getsockopt(zmq.SNDHWM),
            )
        except zmq.ZMQError as exc:
            if exc.errno != zmq.EHOSTUNREACH:
                raise
            self.gone += 1
            self._gone_log.note("dropped a reply to peer %s: it has disconnected", peer.hex()[:16])

    async def publish(self, topic: bytes, frame: bytes) -> None:
        await self.pub.send_multipart([topic, frame])

    def close(self) -> None:
        for task in self._cap_tasks or []:
            task.cancel()
        for cap in (self.cap, self.pub_cap):
            if cap is not None:
                cap.close()
        self.router.close()
        self.pub.close()


def _move(sub: zmq.asyncio.Socket, master: str, old: int, new: int) -> None:
    """Reconnect ``sub`` from ``master:old`` to ``master:new`` (its subscriptions are kept)."""
    log.info("%s publishes on port %d (not %d): subscribing there", master, new, old)
    sub.disconnect(_tcp(master, old))
    sub.connect(_tcp(master, new))


class ZmqClient:
    """A minion's DEALER (requests) and SUB (publishes), reconnecting on its own."""

    def __init__(
        self,
        master: str,
        ret_port: int,
        publish_port: int,
        ctx: zmq.asyncio.Context | None = None,
        reconnect_ms: int = 1000,
        reconnect_max_ms: int = 10000,
        publishes: SharedSubscriber | None = None,
    ) -> None:
        self.ctx = ctx or zmq.asyncio.Context.instance()
        self.dealer = self.ctx.socket(zmq.DEALER)
        self.shared = publishes  # publishes come through a SUB shared with other clients (briny-swarm)
        self._topics: list[bytes] = []
        self._inbox: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
        self.sub = self.ctx.socket(zmq.SUB) if publishes is None else None
        for sock in (self.dealer, self.sub):
            if sock is None:
                continue
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME + 1024)
            sock.setsockopt(zmq.RECONNECT_IVL, reconnect_ms)
            sock.setsockopt(zmq.RECONNECT_IVL_MAX, reconnect_max_ms)
            sock.setsockopt(zmq.TCP_KEEPALIVE, 1)
            sock.setsockopt(zmq.TCP_KEEPALIVE_IDLE, 60)
            if ":" in master:
                sock.setsockopt(zmq.IPV6, 1)
        self.master, self.publish_port = master, publish_port
        self.dealer.connect(_tcp(master, ret_port))
        if self.sub is not None:
            self.sub.setsockopt(zmq.RCVHWM, 100000)
            self.sub.connect(_tcp(master, publish_port))
        self._ids = itertools.count(int.from_bytes(os.urandom(4), "big"))
        self._waiting: dict[bytes, asyncio.Future[bytes]] = {}
        self._reader: asyncio.Task[None] | None = None

    def subscribe(self, topic: bytes) -> None:
        if self.shared is not None:
            self.shared.attach(topic, self._inbox)
            self._topics.append(topic)
            return
        assert self.sub is not None
        self.sub.setsockopt(zmq.SUBSCRIBE, topic)

    def follow_publishes(self, port: int) -> None:
        """Move the SUB connection (or the shared one) to the master's publish ``port``; its
        subscriptions go with it. Nothing when it is there already."""
        if self.shared is not None:
            self.shared.follow_publishes(port)
        elif port != self.publish_port:
            assert self.sub is not None
            _move(self.sub, self.master, self.publish_port, port)
        self.publish_port = port

    async def _read_replies(self) -> None:
        while True:
            parts = await self.dealer.recv_multipart()
            if len(parts) != 2:
                log.warning("dropped a reply of %d parts (expected 2)", len(parts))
                continue
            fut = self._waiting.pop(parts[0], None)
            if fut is not None and not fut.done():
                fut.set_result(parts[1])

    async def request(self, frame: bytes, timeout: float) -> bytes | None:
        if self._reader is None or self._reader.done():
            self._reader = asyncio.ensure_future(self._read_replies())
        corr = (next(self._ids) & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "big")
        fut: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[corr] = fut
        try:
            await self.dealer.send_multipart([corr, frame])
            return await await_reply(fut, timeout)
        finally:
            self._waiting.pop(corr, None)

    async def recv_publish(self) -> tuple[bytes, bytes]:
        if self.sub is None:
            return await self._inbox.get()
        while True:
            parts = await self.sub.recv_multipart()
            if len(parts) == 2:
                return parts[0], parts[1]
            log.warning("dropped a publish of %d parts (expected 2)", len(parts))

    def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        self.dealer.close()
        if self.sub is not None:
            self.sub.close()
        if self.shared is not None:
            for topic in self._topics:
                self.shared.detach(topic, self._inbox)
            self._topics.clear()


class SharedSubscriber:
    """One SUB connection carrying the publishes of many :class:`ZmqClient` (``briny-swarm``: a
    process of thousands of minion identities would otherwise need two sockets, four file
    descriptors, each). Each client still subscribes to its own topic only; the reader hands each
    publish to the queue of the client that subscribed its topic (loop)."""

    def __init__(
        self,
        master: str,
        publish_port: int,
        ctx: zmq.asyncio.Context | None = None,
        reconnect_ms: int = 1000,
        reconnect_max_ms: int = 10000,
    ) -> None:
        self.ctx = ctx or zmq.asyncio.Context.instance()
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME + 1024)
        self.sub.setsockopt(zmq.RECONNECT_IVL, reconnect_ms)
        self.sub.setsockopt(zmq.RECONNECT_IVL_MAX, reconnect_max_ms)
        self.sub.setsockopt(zmq.RCVHWM, 0)  # thousands of minions' jobs at once: never drop one
        if ":" in master:
            self.sub.setsockopt(zmq.IPV6, 1)
        self.sub.connect(_tcp(master, publish_port))
        self.master, self.publish_port = master, publish_port
        self._queues: dict[bytes, asyncio.Queue[tuple[bytes, bytes]]] = {}
        self._reader: asyncio.Task[None] | None = None

    def attach(self, topic: bytes, queue: asyncio.Queue[tuple[bytes, bytes]]) -> None:
        """Subscribe ``topic``; its publishes go to ``queue`` (loop)."""
        if topic not in self._queues:
            self.sub.setsockopt(zmq.SUBSCRIBE, topic)
        self._queues[topic] = queue
        if self._reader is None or self._reader.done():
            self._reader = asyncio.ensure_future(self._read())

    def follow_publishes(self, port: int) -> None:
        """Move the shared SUB to the master's publish ``port`` (the first client whose auth names
        another port moves it for all)."""
        if port != self.publish_port:
            _move(self.sub, self.master, self.publish_port, port)
            self.publish_port = port

    def detach(self, topic: bytes, queue: asyncio.Queue[tuple[bytes, bytes]]) -> None:
        if self._queues.get(topic) is queue:
            del self._queues[topic]
            if not self.sub.closed:
                self.sub.setsockopt(zmq.UNSUBSCRIBE, topic)

    async def _read(self) -> None:
        while True:
            parts = await self.sub.recv_multipart()
            queue = self._queues.get(parts[0]) if len(parts) == 2 else None
            if queue is None:
                log.debug("dropped a publish of %d parts for no attached topic", len(parts))
                continue
            queue.put_nowait((parts[0], parts[1]))

    def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        self._queues.clear()
        self.sub.close()


# -- the in-memory fake -------------------------------------------------------


class MemoryHub:
    """One fake master endpoint and any number of fake minion endpoints."""

    def __init__(self) -> None:
        self.requests: asyncio.Queue[tuple[bytes, bytes, bytes]] = asyncio.Queue()
        self.clients: dict[bytes, "MemoryClient"] = {}
        self._peers = itertools.count(1)
        self.server = MemoryServer(self)

    def client(self) -> "MemoryClient":
        peer = next(self._peers).to_bytes(4, "big")
        client = MemoryClient(self, peer)
        self.clients[peer] = client
        return client


class MemoryServer:
    def __init__(self, hub: MemoryHub) -> None:
        self.hub = hub

    async def recv(self) -> tuple[bytes, bytes, bytes]:
        return await self.hub.requests.get()

    async def reply(self, peer: bytes, corr: bytes, frame: bytes) -> None:
        client = self.hub.clients.get(peer)
        if client is not None:
            client._deliver_reply(corr, frame)

    async def publish(self, topic: bytes, frame: bytes) -> None:
        for client in list(self.hub.clients.values()):
            if any(topic.startswith(t) for t in client.topics):
                client.publishes.put_nowait((topic, frame))

    def close(self) -> None:
        pass


class MemoryClient:
    def __init__(self, hub: MemoryHub, peer: bytes) -> None:
        self.hub = hub
        self.peer = peer
        self.topics: set[bytes] = set()
        self.publishes: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
        self.port: int | None = None
        self._waiting: dict[bytes, asyncio.Future[bytes]] = {}
        self._ids = itertools.count(1)

    def subscribe(self, topic: bytes) -> None:
        self.topics.add(topic)

    def follow_publishes(self, port: int) -> None:
        self.port = port  # one in-memory publisher: the port only tells tests what the auth named

    def _deliver_reply(self, corr: bytes, frame: bytes) -> None:
        fut = self._waiting.pop(corr, None)
        if fut is not None and not fut.done():
            fut.set_result(frame)

    async def request(self, frame: bytes, timeout: float) -> bytes | None:
        corr = next(self._ids).to_bytes(8, "big")
        fut: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[corr] = fut
        await self.hub.requests.put((self.peer, corr, frame))
        try:
            return await await_reply(fut, timeout)
        finally:
            self._waiting.pop(corr, None)

    async def recv_publish(self) -> tuple[bytes, bytes]:
        return await self.publishes.get()

    def close(self) -> None:
        self.hub.clients.pop(self.peer, None)


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` TCP ports free right now on ``host`` (for tests and the quick start)."""
    import socket

    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def iter_topics(ids: Iterable[str]) -> list[bytes]:
    return [topic_for(i) for i in ids]
