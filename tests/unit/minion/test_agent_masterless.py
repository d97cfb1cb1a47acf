"""The minion daemon masterless (``master_type: disable``, issue 12): no master to connect to, the
beacons start at once, returns stay on the host; a ``reactor:`` on a minion with a master is named."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from briny.common.transport import MemoryHub
from briny.minion.agent import MinionAgent
from briny.minion.executor import Job, JobResult
from tests.waiting import until

from .test_agent_support import minion_opts


def test_a_masterless_agent_connects_to_nothing_and_keeps_returns_on_the_host(tmp_path: Path) -> None:
    beacons = {"load": [{"averages": {"1m": [-2.0, -1.0]}}]}  # a load is never below 0: fires each run
    opts = minion_opts(tmp_path, master_type="disable", file_client="local", beacons=beacons)
    agent = MinionAgent(opts, MemoryHub().client, event_bus=False)
    assert agent.masterless and agent.links == []
    sent: list[tuple[str, dict]] = []
    real = agent.deliver

    async def deliver(cmd: str, payload: dict) -> bool:
        sent.append((cmd, payload))
        return await real(cmd, payload)

    agent.deliver = deliver  # type: ignore[method-assign]  # record what the beacons hand over

    async def main() -> None:
        task = asyncio.ensure_future(agent.run())
        try:
            await asyncio.wait_for(agent.attempted.wait(), 5)
            assert agent.status == "masterless" and not agent.connected.is_set()
            await until(lambda: any(c == "event" for c, _ in sent), 5, "the beacon's event, with no master")
            assert await agent.deliver("ret", {"jid": "20240101000000000001", "return": True}) is True
            assert len(agent.outbox) == 0  # nothing waits for a master that will never come
        finally:
            agent.stop()
            await asyncio.wait_for(task, 10)

    asyncio.run(main())
    [(_, event)] = [s for s in sent if s[0] == "event"][:1]
    assert event["tag"] == "salt/beacon/m1/load/"


def test_a_reactor_on_a_minion_with_a_master_is_named(tmp_path: Path, caplog) -> None:
    opts = minion_opts(tmp_path, reactor=[{"custom/*": ["salt://r.sls"]}])
    with caplog.at_level(logging.WARNING, logger="briny.minion.agent"):
        agent = MinionAgent(opts, MemoryHub().client, event_bus=False)
    assert not agent.masterless
    assert "a minion runs a reactor only masterless (master_type: disable)" in caplog.text


def test_while_the_reactor_starts_the_schedule_beacons_and_local_calls_wait_for_it(tmp_path: Path) -> None:
    """Masterless, nothing that fires events runs before the reactor listens: a local call that
    comes meanwhile runs once it does, a beacon's first event comes after, and so does readiness."""
    beacons = {"load": [{"averages": {"1m": [-2.0, -1.0]}}]}  # a load is never below 0: fires each run
    opts = minion_opts(tmp_path, master_type="disable", file_client="local", beacons=beacons)
    agent = MinionAgent(opts, MemoryHub().client, event_bus=False)
    order: list[str] = []
    listening = asyncio.Event()
    real_start, real_deliver = agent.masterless.start, agent.deliver

    async def start(bus_running: bool, executor: Any, pool: Any) -> None:
        await listening.wait()  # the reactor's listener joining the bus
        order.append("reactor")
        await real_start(bus_running, executor, pool)

    async def deliver(cmd: str, payload: dict) -> bool:
        order.append(f"{cmd} {payload.get('tag', '')}")
        return await real_deliver(cmd, payload)

    agent.masterless.start = start  # type: ignore[method-assign]  # a reactor that takes its time to listen
    agent.deliver = deliver  # type: ignore[method-assign]  # record what the beacons hand over

    async def main() -> JobResult:
        task = asyncio.ensure_future(agent.run())
        try:
            await until(lambda: agent.masterless is not None and agent._loop is not None, 5, "the agent's loop")
            call = agent.start_local(Job(jid="20240101000000000002", fun="test.echo", arg=["hi"]))
            assert call is not None
            await asyncio.sleep(0)  # let anything that would not wait run now (none may)
            assert not call.done() and not agent.attempted.is_set() and order == []
            listening.set()
            result = await asyncio.wait_for(call, 10)
            assert agent.attempted.is_set()
            await until(lambda: any(o.startswith("event salt/beacon/") for o in order), 5, "the beacon's event")
            return result
        finally:
            agent.stop()
            await asyncio.wait_for(task, 10)

    result = asyncio.run(main())
    assert result.ret == "hi"
    assert order[0] == "reactor"
