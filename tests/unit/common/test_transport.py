"""The transport seam: the in-memory fake and the real ZeroMQ pair behave alike."""

from __future__ import annotations

import asyncio

import pytest
import zmq
import zmq.asyncio

from briny.common.transport import (
    MemoryHub,
    SharedSubscriber,
    ZmqClient,
    ZmqServer,
    await_reply,
    free_ports,
    topic_for,
)
from tests.waiting import join_subscriber


async def _echo_server(server):
    """Echoes each request; holds a ``slow`` one until the next request was answered (so its
    reply comes back out of order)."""
    held = None
    while True:
        peer, corr, frame = await server.recv()
        if frame == b"slow":
            held = (peer, corr)
            continue
        await server.reply(peer, corr, b"echo:" + frame)
        if held is not None:
            await server.reply(*held, b"slow-done")
            held = None


async def _exercise(server, client_a, client_b):
    task = asyncio.ensure_future(_echo_server(server))
    try:
        # replies are matched to their requests even when they come back out of order
        slow = asyncio.ensure_future(client_a.request(b"slow", 5))
        await asyncio.sleep(0)  # one loop turn: the task sends the slow request first
        fast = await client_a.request(b"hi", 5)
        assert fast == b"echo:hi" and await slow == b"slow-done"
        client_a.subscribe(topic_for("web1"))
        client_b.subscribe(topic_for("web10"))
        for topic, client in ((topic_for("web1"), client_a), (topic_for("web10"), client_b)):
            await join_subscriber(
                lambda probe, t=topic: server.publish(t, probe),
                lambda c=client: _payload(c),
            )
        await server.publish(topic_for("web1"), b"job-for-web1")
        await server.publish(topic_for("web10"), b"job-for-web10")
        await server.publish(topic_for("web1"), b"after")  # behind web10's job on the same PUB socket
        assert await asyncio.wait_for(client_a.recv_publish(), 5) == (topic_for("web1"), b"job-for-web1")
        assert await asyncio.wait_for(client_b.recv_publish(), 5) == (topic_for("web10"), b"job-for-web10")
        # web1 never sees web10's job: the next thing it gets is what was published after it
        assert await asyncio.wait_for(client_a.recv_publish(), 5) == (topic_for("web1"), b"after")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _payload(client) -> bytes:
    return (await client.recv_publish())[1]


def test_memory_fake():
    async def main():
        hub = MemoryHub()
        await _exercise(hub.server, hub.client(), hub.client())
        lonely = hub.client()
        assert await lonely.request(b"nobody answers", 0.1) is None
        await _cancel_lands_with_the_reply(lonely, lambda: lonely._waiting)

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
            await _cancel_lands_with_the_reply(a, lambda: a._waiting)
        finally:
            for s in (a, b, server):
                s.close()
            ctx.term()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_client_follows_the_publish_port_the_master_names():
    """Clients (one with its own SUB, one over a shared SUB) made for a port nobody publishes on
    take publishes from the master's port once told it; their subscriptions move with them."""

    async def main():
        ret_port, pub_port, wrong = free_ports(3)
        ctx = zmq.asyncio.Context()
        server = ZmqServer("127.0.0.1", ret_port, pub_port, ctx)
        shared = SharedSubscriber("127.0.0.1", wrong, ctx)
        own = ZmqClient("127.0.0.1", ret_port, wrong, ctx)
        pooled = ZmqClient("127.0.0.1", ret_port, wrong, ctx, publishes=shared)
        try:
            for topic, client in ((topic_for("own"), own), (topic_for("pooled"), pooled)):
                client.subscribe(topic)
                client.follow_publishes(pub_port)
                client.follow_publishes(pub_port)  # already there: nothing moves
                assert client.publish_port == pub_port
                await join_subscriber(lambda probe, t=topic: server.publish(t, probe), lambda c=client: _payload(c))
                await server.publish(topic, b"job")
                assert await asyncio.wait_for(client.recv_publish(), 5) == (topic, b"job")
            assert shared.publish_port == pub_port
        finally:
            for s in (own, pooled, shared, server):
                s.close()
            ctx.term()

    asyncio.run(asyncio.wait_for(main(), 30))


async def _cancel_lands_with_the_reply(client, waiting) -> None:
    """A request cancelled in the loop turn its reply lands in is cancelled (a task being stopped
    must stop: Python 3.11's ``wait_for`` returned the reply and swallowed the cancel)."""
    task = asyncio.ensure_future(client.request(b"nobody answers", 5))
    while not waiting():
        await asyncio.sleep(0)
    (fut,) = waiting().values()
    fut.set_result(b"the reply")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_await_reply():
    async def main():
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        loop.call_soon(fut.set_result, b"r")
        assert await await_reply(fut, 5) == b"r"
        assert await await_reply(loop.create_future(), 0.01) is None

    asyncio.run(main())
