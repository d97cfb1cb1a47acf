"""The agent's liveness: err replies, lost heartbeats, master restarts, backoff, the local bus."""

from __future__ import annotations

import asyncio
import random
import re
import time

from briny.common import wire
from briny.common.event import EventSender
from briny.common.transport import MemoryHub
from briny.minion.agent import Backoff, MinionAgent

from tests.waiting import until

from .test_agent_support import (  # noqa: F401 - minion_opts and short_root are fixtures
    fire_until_heard,
    RawMaster,
    Running,
    held_job,
    minion_opts,
    record_pauses,
    run,
    short_root,
)


def make(root, hub: MemoryHub, **extra) -> MinionAgent:
    return MinionAgent(minion_opts(root, **extra), hub.client, event_bus=False)


def test_backoff_doubles_with_jitter_inside_its_bounds():
    drawn = []

    def least(a, b):
        drawn.append((a, b))
        return a

    low = Backoff(100, 1000, uniform=least)  # no jitter: the bare doubling, then the cap
    assert [low.next() for _ in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    # jitter of up to half the interval: upwards below the cap, downwards at it
    assert drawn == [(0, 50), (0, 100), (0, 200), (0, 400), (0, 500), (0, 500)]
    most = Backoff(100, 1000, uniform=lambda a, b: b)
    assert [most.next() for _ in range(6)] == [0.15, 0.3, 0.6, 1.0, 0.5, 0.5]
    most.reset()
    assert most.next() == 0.15
    for seed in range(50):  # real jitter: within the bounds, and it varies
        b = Backoff(100, 1000, uniform=random.Random(seed).uniform)
        delays = [b.next() for _ in range(8)]
        assert 0.1 <= delays[0] <= 0.15 and 0.2 <= delays[1] <= 0.3 and 0.4 <= delays[2] <= 0.6
        assert all(0.5 <= d <= 1.0 for d in delays[3:])
    at_cap = Backoff(100, 1000, attempt=9, uniform=random.Random(1).uniform)
    assert len({at_cap.next() for _ in range(20)}) > 1  # jitter at the cap too


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
            await old.stop()  # down: pings go unanswered until the minion gives the session up
            await until(lambda: not agent.connected.is_set(), 5, "the minion to notice the master is gone")
            new = RawMaster(hub).start()  # same key, no sessions
            await new.wait_for(lambda r: r["cmd"] == "grains", timeout=5)
            ret = await new.wait_ret(await new.publish("m1", "test.echo", ["back"]))
        await new.stop()
        return ret

    assert run(main())["return"] == "back"


def test_the_heartbeat_waits_while_the_master_answers_other_requests(tmp_path):
    """A ping only after ping_interval (0.2 s) with no answered request: a minion returning
    jobs every 50 ms sends none meanwhile (a ping every 0.2 s before); once quiet, it beats
    again. A job whose round trip took longer than ping_interval (a loaded machine) may let
    one ping through: those are counted and allowed."""

    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        slow = 0
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            busy_start = len(master.requests)
            for n in range(20):  # a second of returns, one every 50 ms
                began = time.monotonic()
                await master.wait_ret(await master.publish("m1", "test.echo", [n]))
                await asyncio.sleep(0.05)  # pacing the load, not waiting for anything
                slow += time.monotonic() - began >= 0.2
            busy_end = len(master.requests)
            await master.wait_for(lambda r: r["cmd"] == "ping" and len(master.requests) > busy_end + 1)
        await master.stop()
        return master.requests, busy_start, busy_end, slow

    requests, busy_start, busy_end, slow = run(main())
    busy_pings = [r for r in requests[busy_start:busy_end] if r["cmd"] == "ping"]
    assert len(busy_pings) <= 1 + slow, (len(busy_pings), slow)
    assert any(r["cmd"] == "ping" for r in requests[busy_end:])  # quiet again: it beats


def test_lost_heartbeats_trigger_reauth_after_a_backoff(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        agent = make(tmp_path, hub, recon_default=150, recon_max=400)
        agent.backoff.uniform = lambda a, b: b
        pauses: list[tuple[float, int]] = []  # (seconds, signed auths so far)

        async def pause(seconds: float) -> None:
            pauses.append((seconds, len(master.auths)))

        agent.pause = pause
        async with Running(agent):
            await asyncio.wait_for(agent.connected.wait(), 5)
            master.answer_pings = False
            await master.wait_for(lambda r: r["cmd"] == "ping")
            sent = time.monotonic()
            await until(lambda: pauses, 5, "the minion to give the session up")
            gap = time.monotonic() - sent
            await master.wait_auths(2, timeout=5)
            await master.wait_for(lambda r: r["cmd"] == "grains" and len(master.auths) == 2)
        await master.stop()
        return pauses, gap, master.auths

    pauses, gap, auths = run(main())
    # the unanswered ping waits auth_timeout (0.5 s), then one backoff delay: recon_default
    # (0.15 s) with the most jitter, before the next auth
    assert gap >= 0.45
    assert pauses[0] == (0.225, 1) and len(auths) >= 2


def test_a_master_that_refuses_is_retried_with_backoff_never_in_a_busy_loop(tmp_path):
    async def main():
        hub = MemoryHub()
        steps: list = []

        async def refuse():
            while True:
                peer, corr, frame = await hub.server.recv()
                steps.append(("attempt", 0))
                env = wire.decode(frame)
                await hub.server.reply(peer, corr, wire.clear("err", env.id, {"error": "busy"}).encode())

        task = asyncio.ensure_future(refuse())
        agent = make(tmp_path, hub, recon_default=50, recon_max=300)
        agent.backoff.uniform = lambda a, b: a
        record_pauses(agent, steps)
        async with Running(agent):
            await until(lambda: len(steps) >= 10, 5, "five refused attempts")
            status, session = agent.status, agent.session
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return steps, status, session

    steps, status, session = run(main())
    assert status == "refused" and session is None
    # each refusal is followed by a pause before the next attempt, doubling up to the cap
    assert steps[:10] == [
        ("attempt", 0),
        ("pause", 0.05),
        ("attempt", 0),
        ("pause", 0.1),
        ("attempt", 0),
        ("pause", 0.2),
        ("attempt", 0),
        ("pause", 0.3),
        ("attempt", 0),
        ("pause", 0.3),
    ]


def test_a_return_outlives_a_lost_session(tmp_path):
    flag = tmp_path / "go"

    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub, ping_interval=5)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            jid = await master.publish("m1", "cmd.run", held_job(flag))
            await until(lambda: agent.registry.get(jid), 5, "the job to start")
            master.sessions.clear()  # the return gets err, is kept, goes after re-auth
            flag.touch()
            ret = await master.wait_ret(jid)
        await master.idle()  # the minion has stopped: everything it sent has been taken
        await master.stop()
        return master, jid, ret

    master, jid, ret = run(main())
    assert ret["return"] == "done" and len(master.rets(jid)) == 1
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
            sender = EventSender(opts)  # one pipe: the event under test goes behind the probes
            await fire_until_heard(sender, master)
            await loop.run_in_executor(None, sender.fire, "custom/thing", {"x": 1})
            event = await master.wait_for(lambda r: r["cmd"] == "event" and r["tag"] == "custom/thing")
            sender.close()
        await master.stop()
        return event

    event = run(main())
    # what was sent, without the bus's _stamp/_seq: the master wraps it with the session's id
    # (Salt's _minion_event shape, briny.master.busshape), so the minion adds no id of its own
    assert event["tag"] == "custom/thing" and event["data"] == {"x": 1}, event


def test_a_master_name_that_does_not_resolve_is_named_and_never_connected_to(tmp_path, caplog):
    """As Salt: no connection is tried until ``master`` resolves; an ERROR names the host, then
    the minion retries on its backoff (the pauses), without an ERROR at each attempt."""
    from briny.minion.masters import Connector, MasterAddress

    made: list = []
    hub = MemoryHub()
    connector = Connector(MasterAddress("nonexistent.invalid", 4506, 4505), lambda a: made.append(a) or hub.client())

    async def main():
        agent = MinionAgent(minion_opts(tmp_path, recon_default=50, recon_max=100), connector, event_bus=False)
        pauses = record_pauses(agent)
        async with Running(agent):
            await until(lambda: len(pauses) >= 3, 10, "three attempts")
        return agent

    with caplog.at_level("ERROR", logger="briny.minion.masters"):
        agent = run(main())
    assert made == [] and agent.session is None
    [said] = [r.getMessage() for r in caplog.records if r.name == "briny.minion.masters"]
    # the resolver's words vary ("Name or service not known", "Temporary failure in name resolution")
    assert re.fullmatch(
        r"DNS lookup of the master 'nonexistent\.invalid' failed \([^)]+\); set 'master' in the minion config to "
        r"a name that resolves; retrying \(said again every 60 s while it lasts\)",
        said,
    ), said


def test_an_unreachable_master_is_said_again_each_minute_and_at_once_after_a_session(caplog):
    from briny.minion.masters import MasterLink

    now = [1000.0]
    link = MasterLink("m:4506", MemoryHub().client, None, Backoff(100, 1000), clock=lambda: now[0])  # type: ignore[arg-type]
    with caplog.at_level("ERROR", logger="briny.minion.masters"):
        link.unreachable("gone")
        now[0] += 59
        link.unreachable("gone")  # within the minute: not again
        now[0] += 1
        link.unreachable("gone")
        link.connected()
        link.unreachable("gone again")  # a new outage: at once
    assert [r.getMessage().partition(";")[0] for r in caplog.records] == ["gone", "gone", "gone again"]
