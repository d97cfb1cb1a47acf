"""The transport seam: the in-memory fake and the real ZeroMQ pair behave alike."""

from __future__ import annotations

import asyncio

import pytest
import zmq
import zmq.asyncio

from briny.common.transport import MemoryHub, ZmqClient, ZmqServer, free_ports, topic_for


async def _echo_server(server, stop):
    while not stop.is_set():
        try:
            peer, corr, frame = await asyncio.wait_for(server.recv(), 0.1)
        except asyncio.TimeoutError:
            continue
        if frame == b"slow":
            asyncio.get_running_loop().call_later(
                0.2, lambda p=peer, c=corr: asyncio.ensure_future(server.reply(p, c, b"slow-done"))
            )
            continue
        await server.reply(peer, corr, b"echo:" + frame)


async def _exercise(server, client_a, client_b):
    stop = asyncio.Event()
    task = asyncio.ensure_future(_echo_server(server, stop))
    try:
        # replies are matched to their requests even when they come back out of order
        slow = asyncio.ensure_future(client_a.request(b"slow", 5))
        fast = await client_a.request(b"hi", 5)
        assert fast == b"echo:hi" and await slow == b"slow-done"
        client_a.subscribe(topic_for("web1"))
        client_b.subscribe(topic_for("web10"))
        await asyncio.sleep(0.3)  # let SUB join
        await server.publish(topic_for("web1"), b"job-for-web1")
        await server.publish(topic_for("web10"), b"job-for-web10")
        assert await asyncio.wait_for(client_a.recv_publish(), 5) == (topic_for("web1"), b"job-for-web1")
        assert await asyncio.wait_for(client_b.recv_publish(), 5) == (topic_for("web10"), b"job-for-web10")
        with pytest.raises(asyncio.TimeoutError):  # web1 never sees web10's job
            await asyncio.wait_for(client_a.recv_publish(), 0.3)
    finally:
        stop.set()
        await task


def test_memory_fake():
    async def main():
        hub = MemoryHub()
        await _exercise(hub.server, hub.client(), hub.client())
        lonely = hub.client()
        assert await lonely.request(b"nobody answers", 0.1) is None

    asyncio.run(main())


def test_zeromq_on_loopback():
    async def main():
        ret_port, pub_port = free_ports(2)
        ctx = zmq.asyncio.Context()
        server = ZmqServer("127.0.0.1", ret_port, pub_port, ctx)
        a = ZmqClient("127.0.0.1", ret_port, pub_port, ctx)
        b = ZmqClient("127.0.0.1", ret_port, pub_port, ctx)
        try:
            await _exercise(server, a, b)
            # a request that gets no answer times out instead of hanging
            assert await a.request(b"slow", 0.05) is None
        finally:
            for s in (a, b, server):
                s.close()
            ctx.term()

    asyncio.run(asyncio.wait_for(main(), 30))
