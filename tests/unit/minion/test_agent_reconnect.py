"""The agent's liveness: err replies, lost heartbeats, master restarts, backoff, the local bus."""

from __future__ import annotations

import asyncio
import time

from briny.common import wire
from briny.common.event import fire_event
from briny.common.transport import MemoryHub
from briny.minion.agent import Backoff, MinionAgent

from .test_agent_support import RawMaster, Running, minion_opts, run, short_root  # noqa: F401 - a fixture


def make(root, hub: MemoryHub, **extra) -> MinionAgent:
    return MinionAgent(minion_opts(root, **extra), hub.client, event_bus=False)


def test_backoff_doubles_with_jitter_inside_its_bounds():
    for _ in range(50):
        b = Backoff(100, 1000)
        delays = [b.next() for _ in range(8)]
        assert all(0.1 <= d <= 1.0 for d in delays)
        assert delays[0] <= 0.15 and 0.2 <= delays[2] <= 0.6
        assert all(0.5 <= d <= 1.0 for d in delays[5:])
        b.reset()
        assert b.next() <= 0.15
    assert len({Backoff(100, 1000, attempt=9).next() for _ in range(20)}) > 1  # jitter at the cap too


def test_an_err_reply_makes_the_minion_authenticate_again(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            master.sessions.clear()  # the master forgot us: the next ping gets err
            await master.wait_auths(2)
            await master.wait_for(lambda r: r["cmd"] == "grains" and len(master.auths) == 2)
            ret = await master.wait_ret(await master.publish("m1", "test.ping"))
            count = agent.auth_count
        await master.stop()
        return ret, count

    ret, count = run(main())
    assert ret["return"] is True and count == 2


def test_a_restarted_master_gets_the_minion_back_and_it_answers_the_next_job(tmp_path):
    async def main():
        hub = MemoryHub()
        old = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            await old.stop()
            await asyncio.sleep(0.3)  # down for a moment: pings go unanswered
            new = RawMaster(hub).start()  # same key, no sessions
            await new.wait_for(lambda r: r["cmd"] == "grains", timeout=5)
            ret = await new.wait_ret(await new.publish("m1", "test.echo", ["back"]))
        await new.stop()
        return ret

    assert run(main())["return"] == "back"


def test_lost_heartbeats_trigger_reauth_after_a_backoff(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub, recon_default=150, recon_max=400)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            master.answer_pings = False
            ping = await master.wait_for(lambda r: r["cmd"] == "ping")
            sent = time.monotonic()
            await master.wait_auths(2, timeout=5)
            gap = master.auths[1][0] - sent
            await master.wait_for(lambda r: r["cmd"] == "grains" and len(master.auths) == 2)
        await master.stop()
        return ping, gap

    _, gap = run(main())
    # no reply within auth_timeout (0.5 s), then at least recon_default (0.15 s) before re-auth
    assert 0.6 <= gap < 2.0


def test_a_master_that_refuses_is_retried_with_backoff_never_in_a_busy_loop(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub)
        times = []

        async def refuse():
            while True:
                peer, corr, frame = await hub.server.recv()
                times.append(time.monotonic())
                env = wire.decode(frame)
                await hub.server.reply(peer, corr, wire.clear("err", env.id, {"error": "busy"}).encode())

        task = asyncio.ensure_future(refuse())
        async with Running(make(tmp_path, hub, recon_default=50, recon_max=300)) as agent:
            await asyncio.sleep(1.5)
            assert agent.session is None and agent.status == "refused"
        task.cancel()
        await master.stop()
        return times

    times = run(main())
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert 3 <= len(times) <= 12
    assert all(g >= 0.045 for g in gaps)
    assert max(gaps) >= 0.15  # it backs off


def test_a_return_outlives_a_lost_session(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub, ping_interval=5)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            jid = await master.publish("m1", "test.sleep", [0.3])
            await asyncio.sleep(0.05)
            master.sessions.clear()  # the return gets err, is kept, goes after re-auth
            ret = await master.wait_ret(jid)
            await asyncio.sleep(0.2)
        await master.stop()
        return master, jid, ret

    master, jid, ret = run(main())
    assert ret["return"] is True and len(master.rets(jid)) == 1
    assert len(master.auths) == 2


def test_events_on_the_local_bus_reach_the_master(short_root):  # noqa: F811 - the imported fixture
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        opts = minion_opts(short_root)
        agent = MinionAgent(opts, hub.client, event_bus=True)
        async with Running(agent):
            await asyncio.wait_for(agent.connected.wait(), 5)
            loop = asyncio.get_running_loop()
            for _ in range(20):  # the bus and its subscriber need a moment
                await loop.run_in_executor(None, fire_event, opts, "custom/thing", {"x": 1})
                try:
                    event = await master.wait_for(lambda r: r["cmd"] == "event", timeout=0.3)
                    break
                except AssertionError:
                    continue
        await master.stop()
        return event

    event = run(main())
    assert event["tag"] == "custom/thing" and event["data"]["x"] == 1 and event["data"]["id"] == "m1"
