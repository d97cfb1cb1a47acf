"""The master's logic on real ZeroMQ sockets (127.0.0.1, free ports): auth, ping, publish, garbage."""

from __future__ import annotations

import asyncio
import os

import zmq
import zmq.asyncio

from briny.common import handshake, wire
from briny.common.transport import ZmqClient, ZmqServer, free_ports
from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.keys.store import KeyStore
from briny.master.daemon import build_server

from .test_server import RawMinion, join_publishes, rsa_key


async def _jid(publishing) -> str:
    return (await publishing)["jid"]


def test_auth_ping_and_publish_over_zeromq(master_opts):
    master_opts["auto_accept"] = True

    async def main() -> None:
        ret_port, pub_port = free_ports(2)
        ctx = zmq.asyncio.Context()
        transport = ZmqServer("127.0.0.1", ret_port, pub_port, ctx=ctx)
        cache = SqliteJobCache(os.path.join(master_opts["cachedir"], "jobs.sqlite"))
        events: list = []
        server = build_server(
            master_opts,
            transport,
            KeyStore(master_opts, fire_events=False),
            cache,
            fire=lambda t, d: events.append((t, d)),
        )
        task = asyncio.ensure_future(server.serve())
        client = ZmqClient("127.0.0.1", ret_port, pub_port, ctx=ctx)
        raw = ctx.socket(zmq.DEALER)
        raw.setsockopt(zmq.LINGER, 0)
        raw.connect(f"tcp://127.0.0.1:{ret_port}")
        try:
            m = RawMinion(client, "m1", rsa_key(0))
            assert (await m.auth())["status"] == "accepted"
            kind, rep = await m.req("ping")
            assert kind == "rep" and rep["ok"] is True
            # wrong part counts, random bytes, truncated frames: dropped, the master keeps serving
            await raw.send_multipart([b"only-one-part"])
            await raw.send_multipart([b"a", b"b", b"c"])
            await raw.send_multipart([b"12345678", os.urandom(100)])
            await raw.send_multipart([b"12345678", m.frame("ping")[:20]])
            token = os.urandom(handshake.TOKEN_BYTES)  # behind them on the same pipe: handled after them
            await raw.send_multipart([b"hello-01", handshake.hello("m9", token)])
            corr, challenge = await asyncio.wait_for(raw.recv_multipart(), 5)
            assert corr == b"hello-01" and handshake.read_challenge(wire.decode(challenge), "m9", token)
            assert (await m.req("grains", grains={"os": "Debian"}))[0] == "rep"
            await join_publishes(m, lambda: _jid(server.publisher.publish("m1", "glob", "test.ping")))
            res = await server.publisher.publish("os:Debian", "grain", "test.ping")
            assert res["minions"] == ["m1"]
            pub = await m.next_pub(5)
            assert pub is not None and pub["jid"] == res["jid"]
            assert not task.done()
        finally:
            server.stop()
            task.cancel()
            server.close()
            server.grains.close()
            client.close()
            raw.close()
            transport.close()
            cache.close()
            ctx.term()

    asyncio.run(asyncio.wait_for(main(), 30))
