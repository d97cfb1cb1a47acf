"""Issue 19 on the publish port: a subscriber without a key cannot make the master hold memory.

The master's PUB socket queues at most ``pub_hwm`` publishes per subscriber connection (ZeroMQ
drops one for a connection whose queue is full) and keeps at most ``pub_max_connections``
connections; a legitimate minion whose publish was dropped gets it again after its next ping and
runs the job. The memory a real master keeps is measured by ``bench/flood.py --subscribers``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import zmq
import zmq.asyncio

from briny.common import wire
from briny.master import jobbook
from briny.common.transport import ZmqClient, ZmqServer, free_ports, topic_for

from tests.waiting import until

from ..minion.test_agent_support import run
from ..pairsupport import real_pair, running_master
from .test_server import RawMinion, join_publishes, rsa_key
from .test_server_flood import SLACK, SNDBUF

ARG = "x" * 2000  # each publish ~2.6 KiB


async def _drain(sock: zmq.asyncio.Socket) -> int:
    """What a subscriber that starts reading now gets: publishes until none comes for 1 s."""
    got = 0
    while await sock.poll(1000):
        await sock.recv_multipart()
        got += 1
    return got


def test_a_subscriber_that_never_reads_holds_at_most_pub_hwm_publishes_and_connections_are_capped(master_opts):
    master_opts["auto_accept"] = True
    hwm, conns, jobs = 8, 3, 300

    async def main() -> None:
        ret_port, pub_port = free_ports(2)
        ctx = zmq.asyncio.Context()
        transport = ZmqServer(
            "127.0.0.1", ret_port, pub_port, ctx=ctx, pub_hwm=hwm, pub_max_connections=conns, sndbuf=SNDBUF
        )
        socks: list[zmq.asyncio.Socket] = []

        def deaf(topic: bytes) -> zmq.asyncio.Socket:
            sock = ctx.socket(zmq.SUB)
            for opt, value in ((zmq.LINGER, 0), (zmq.RCVHWM, 1), (zmq.RCVBUF, SNDBUF), (zmq.RECONNECT_IVL, 50)):
                sock.setsockopt(opt, value)
            sock.setsockopt(zmq.SUBSCRIBE, topic)
            sock.connect(f"tcp://127.0.0.1:{pub_port}")
            socks.append(sock)
            return sock

        client = ZmqClient("127.0.0.1", ret_port, pub_port, ctx=ctx)
        try:
            async with running_master(master_opts, transport) as master:
                publish = master.server.publisher.publish
                m = RawMinion(client, "m1", rsa_key(0))  # reads every publish
                assert (await m.auth())["status"] == "accepted"
                everything, its_topic = deaf(b""), deaf(topic_for("m1"))
                await until(lambda: transport.pub_cap is not None and len(transport.pub_cap.open) == 3, 10, "3 SUBs")

                async def probe() -> str:
                    return str((await publish("m1", "glob", "test.arg", [ARG]))["jid"])

                await join_publishes(m, probe)  # the deaf ones had joined before m1 (they connected first)
                for n in range(jobs):  # m1 takes each before the next is sent: it loses none
                    jid = await probe()
                    pub = await m.next_pub(10)
                    assert pub is not None and pub["jid"] == jid, f"m1 lost job {n}"
                size = len(_one_frame(master, m.id))
                assert size > len(ARG)
                for sock in (everything, its_topic):  # all that the master held for them, and no more
                    held = await _drain(sock)
                    assert 0 < held <= hwm + SLACK // size + 1, (held, size)
                # more connections than the cap: the ones past it are shut down as they come
                for _ in range(3):
                    deaf(b"")
                await until(lambda: transport.pub_cap is not None and transport.pub_cap.refused >= 2, 10, "refused")
                assert transport.pub_cap is not None and len(transport.pub_cap.open) <= conns
        finally:
            client.close()
            for sock in socks:
                sock.close()
            transport.close()
            ctx.term()

    asyncio.run(asyncio.wait_for(main(), 60))


def _one_frame(master: Any, minion_id: str) -> bytes:
    """The bytes of one publish of ``test.arg`` with :data:`ARG` to ``minion_id`` (its size)."""
    sess = master.server.sessions.get(minion_id)
    return master.server.publisher._pub_frame(sess, {"jid": "0" * 20, "fun": "test.arg", "arg": [ARG]})


class DropPublishes:
    """Between the master and the hub: the first ``count`` publishes are lost, as ZeroMQ's PUB
    loses one for a subscriber connection whose queue (``pub_hwm``) is full."""

    def __init__(self, inner: Any, count: int) -> None:
        self.inner, self.count = inner, count
        self.dropped: list[str] = []

    async def recv(self) -> tuple[bytes, bytes, bytes]:
        return await self.inner.recv()

    async def reply(self, peer: bytes, corr: bytes, frame: bytes) -> None:
        await self.inner.reply(peer, corr, frame)

    async def publish(self, topic: bytes, frame: bytes) -> None:
        if len(self.dropped) < self.count:
            self.dropped.append(wire.decode(frame).id)
            return
        await self.inner.publish(topic, frame)

    def close(self) -> None:
        self.inner.close()


def test_a_minion_whose_publish_was_dropped_runs_the_job_after_its_next_ping(tmp_path):
    """The publish never reaches the minion; the minion pings (ping_interval 0.2 s) and is handed
    the job it has not returned, runs it once and returns it; a returned job is not sent again."""
    wrapped: list[DropPublishes] = []

    def wrap(inner: Any) -> Any:
        wrapped.append(DropPublishes(inner, 1))
        return wrapped[0]

    async def main() -> None:
        async with real_pair(tmp_path, wrap=wrap) as pair:
            jid = (await pair.server.publisher.publish(pair.agent.id, "glob", "test.ping", []))["jid"]
            assert await pair.wait_return(jid, 10) is True
            assert wrapped[0].dropped == [pair.agent.id]
            returns = [t for t, _ in pair.events if t == f"salt/job/{jid}/ret/{pair.agent.id}"]
            assert len(returns) == 1
            assert pair.server.jobs.waiting(pair.agent.id) == []
            assert await pair.job("test.ping") is True  # the next job goes as ever

    run(main(), timeout=30)


def test_a_minion_that_returns_a_later_job_gets_the_one_whose_publish_was_dropped(tmp_path, monkeypatch):
    """A busy minion does not ping: its return of the next job brings the job it missed."""
    monkeypatch.setattr(jobbook, "RESEND_AFTER", 0.0)  # the dropped job is old enough at once
    wrapped: list[DropPublishes] = []

    def wrap(inner: Any) -> Any:
        wrapped.append(DropPublishes(inner, 1))
        return wrapped[0]

    async def main() -> None:
        async with real_pair(tmp_path, wrap=wrap, ping_interval=600) as pair:
            missed = (await pair.server.publisher.publish(pair.agent.id, "glob", "test.ping", []))["jid"]
            await until(lambda: wrapped[0].dropped == [pair.agent.id], 5, "the first publish dropped")
            assert (await pair.job("test.arg", "next"))["args"] == ["next"]
            assert await pair.wait_return(missed, 10) is True

    run(main(), timeout=30)
