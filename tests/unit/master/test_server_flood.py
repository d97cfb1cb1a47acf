"""Issue 19: a peer without a session cannot make the master hold memory or fill its log.

What it may cost is bounded per connection (``ret_send_hwm`` replies queued), in connections
(``ret_max_connections``), in answers a second (``auth_peer_rate``) and in log lines (one a
second per kind, with counts); a minion whose reply was dropped authenticates again. The
memory a real master keeps under a flood is measured by ``bench/flood.py``, not here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import zmq
import zmq.asyncio

from briny.common import handshake, wire
from briny.common.transport import MemoryServer, ZmqClient, ZmqServer, free_ports
from briny.master import server as server_mod
from briny.master.unauth import PeerGuard

from tests.waiting import until

from ..minion.test_agent_support import run
from ..pairsupport import real_pair, running_master
from .test_server import Ctx, RawMinion, rsa_key, run_master

SNDBUF = 4096  # the kernel's buffers of the deaf connection, both ends (Linux doubles them)
SLACK = 64 * 1024  # bytes the two kernels' buffers and ZeroMQ's two 8 KiB batches may hold besides


def _hello(minion_id: str) -> bytes:
    return handshake.hello(minion_id, os.urandom(handshake.TOKEN_BYTES))


def test_a_peer_that_never_reads_holds_at_most_send_hwm_replies_and_connections_are_capped(master_opts):
    master_opts["auto_accept"] = True
    master_opts["auth_peer_rate"] = 10**6  # the queue is the subject here, not the rate
    hwm, conns, hellos = 8, 3, 1500

    async def main() -> None:
        ret_port, pub_port = free_ports(2)
        ctx = zmq.asyncio.Context()
        transport = ZmqServer(
            "127.0.0.1", ret_port, pub_port, ctx=ctx, send_hwm=hwm, max_connections=conns, sndbuf=SNDBUF
        )
        socks: list[zmq.asyncio.Socket] = []

        def deaf() -> zmq.asyncio.Socket:
            sock = ctx.socket(zmq.DEALER)
            for opt, value in ((zmq.LINGER, 0), (zmq.RCVHWM, 1), (zmq.RCVBUF, SNDBUF), (zmq.RECONNECT_IVL, 50)):
                sock.setsockopt(opt, value)
            sock.connect(f"tcp://127.0.0.1:{ret_port}")
            socks.append(sock)
            return sock

        client = None
        try:
            async with running_master(master_opts, transport) as master:
                first = deaf()
                for i in range(hellos):  # and never reads an answer
                    await first.send_multipart([i.to_bytes(8, "big"), _hello(f"deaf{i}")])
                await until(lambda: transport.queued + transport.unread >= hellos, 20, "every hello handled")
                size = len(handshake.challenge("deaf0", b"t" * 32, b"c" * 32, master.server.master_pub, pub_port))
                assert transport.unread > 0
                assert transport.queued <= hwm + SLACK // size, (transport.queued, size)
                # more connections than the cap: the ones past it are shut down as they come
                for _ in range(4):
                    deaf()
                await until(lambda: transport.cap is not None and transport.cap.refused >= 2, 10, "connections refused")
                assert transport.cap is not None and len(transport.cap.open) <= conns
                for sock in socks:  # the flood ends: a minion gets in and is answered
                    sock.close()
                await until(lambda: not transport.cap.open, 10, "the deaf connections closed")
                client = ZmqClient("127.0.0.1", ret_port, pub_port, ctx=ctx)
                m = RawMinion(client, "m1", rsa_key(0))
                assert (await m.auth())["status"] == "accepted"
                assert (await m.req("ping"))[0] == "rep"
                assert len(transport.cap.open) == 1
        finally:
            if client is not None:
                client.close()
            for sock in socks:
                sock.close()
            transport.close()
            ctx.term()

    asyncio.run(asyncio.wait_for(main(), 60))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _send(c: Ctx, peer: bytes, frame: bytes) -> asyncio.Future[bytes]:
    """Queue ``frame`` from ``peer`` without waiting; the future gets the answer, if one comes."""
    corr = os.urandom(8)
    fut: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
    c.hub.clients[peer]._waiting[corr] = fut
    c.hub.requests.put_nowait((peer, corr, frame))
    return fut


def flush_guard(guard: PeerGuard) -> None:
    """What the housekeeping's ``ratelog.flush_all`` does for this guard's lines (the other
    throttles of the process belong to other tests' masters)."""
    for throttle in (guard.dropped, guard.refused, guard.forged, guard.over_rate, guard.no_session, guard.bad_request):
        throttle.flush()


def _lines(caplog: Any, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


def test_refusals_are_counted_and_logged_once_a_second_and_a_flooding_peer_goes_unanswered(master_opts, caplog):
    master_opts["auth_peer_rate"] = 100
    caplog.set_level(logging.INFO, logger="briny.master.server")
    clock = Clock()

    async def body(c: Ctx) -> None:
        c.server.guard = guard = PeerGuard(c.opts, server_mod.log, clock)
        flooder, other = c.hub.client(), c.hub.client()
        refused = [_send(c, flooder.peer, _hello(f"../x{i}")) for i in range(250)]  # a bad id: err
        garbage = [_send(c, flooder.peer, os.urandom(64)) for _ in range(300)]  # no answer, ever
        unauth = [
            _send(c, other.peer, wire.sealed("req", f"nobody{i}", os.urandom(32), {"cmd": "ping"}).encode())
            for i in range(50)
        ]
        await c.idle()
        assert [f.done() for f in garbage].count(True) == 0
        answered = [f for f in refused if f.done()]
        assert len(answered) == 100 and all(wire.decode(f.result()).kind == "err" for f in answered)
        assert all(f.done() for f in unauth)  # another peer: within its own rate
        assert (guard.refused.total, guard.over_rate.total, guard.dropped.total) == (100, 150, 300)
        # one line per kind, whatever the count
        assert len(_lines(caplog, "refused an auth request")) == 1
        assert len(_lines(caplog, "faster than auth_peer_rate")) == 1
        assert len(_lines(caplog, "dropped a frame from peer")) == 1
        assert len(_lines(caplog, "no session (unauthenticated)")) == 1
        assert len([r for r in caplog.records if r.name == "briny.master.server"]) == 4
        clock.now += 1.0  # a second later the counts are written (the housekeeping's flush_all)
        flush_guard(guard)
        assert _lines(caplog, "refused an auth request")[-1].endswith(
            "(99 like it since the last such line, 100 in all)"
        )
        assert _lines(caplog, "faster than auth_peer_rate")[-1].endswith(
            "(149 like it since the last such line, 150 in all)"
        )
        assert _lines(caplog, "dropped a frame from peer")[-1].endswith(
            "(299 like it since the last such line, 300 in all)"
        )
        flush_guard(guard)  # nothing new: no line
        assert len(_lines(caplog, "refused an auth request")) == 2
        challenge = _send(c, flooder.peer, _hello("m1"))  # its bucket refilled
        await c.idle()
        assert wire.decode(challenge.result()).kind == "auth_reply"

    run_master(master_opts, body)


class DropReplies:
    """The master's transport, dropping the first reply of each kind named (as ZeroMQ drops a reply
    to a connection whose queue is full), and recording the challenges it passes on."""

    def __init__(self, inner: MemoryServer, kinds: set[str]) -> None:
        self.inner = inner
        self.kinds = set(kinds)
        self.dropped: list[str] = []
        self.challenges: list[dict[str, Any]] = []

    async def recv(self) -> tuple[bytes, bytes, bytes]:
        return await self.inner.recv()

    async def reply(self, peer: bytes, corr: bytes, frame: bytes) -> None:
        env = wire.decode(frame)
        kind = env.kind
        if kind == "auth_reply":
            payload = wire.clear_payload(env)
            kind = "challenge" if payload["status"] == "challenge" else "decision"
            if kind == "challenge":
                self.challenges.append(payload)
        if kind in self.kinds:
            self.kinds.discard(kind)
            self.dropped.append(kind)
            return
        await self.inner.reply(peer, corr, frame)

    async def publish(self, topic: bytes, frame: bytes) -> None:
        await self.inner.publish(topic, frame)

    def close(self) -> None:
        self.inner.close()


def test_a_minion_whose_replies_were_dropped_authenticates_again(tmp_path):
    """The challenge, then the accepted decision (the master opened a session the minion never
    heard of) are lost: the minion asks again after auth_timeout and gets in; once it has pinned
    the master's key its challenges leave the key out."""
    wrapped: list[DropReplies] = []

    def wrap(inner: Any) -> Any:
        wrapped.append(DropReplies(inner, {"challenge", "decision"}))
        return wrapped[0]

    async def main() -> None:
        async with real_pair(tmp_path, wrap=wrap, auth_timeout=0.3) as pair:
            drops = wrapped[0]
            assert drops.dropped == ["challenge", "decision"] and pair.agent.auth_count == 1
            assert await pair.job("test.ping") is True
            assert all("master_pub" in c for c in drops.challenges)  # nothing pinned yet: the key comes along
            # the same identity again, its master key pinned now: the challenge leaves it out
            outcome = await pair.agent.links[0].auth.authenticate(pair.hub.client())
            assert outcome.status == "accepted" and "master_pub" not in drops.challenges[-1]

    run(main(), timeout=30)


def test_the_heap_is_trimmed_in_the_quiet_seconds_after_a_burst_only():
    clock = Clock()
    guard = PeerGuard({"__role": "master"}, server_mod.log, clock)
    seconds = []
    for frames in (10, 1000, 0, 0, 0, 0, 0, 0, 0):  # a quiet master, a burst, then quiet
        guard.frames = frames
        seconds.append(guard.second())
        clock.now += 1.0
    assert seconds == [False, False, True, False, False, False, False, True, False]
    clock.now += 60.0  # the window after the burst is over
    assert not guard.second()
