"""The minion daemon masterless (``master_type: disable``, issue 12): no master to connect to, the
beacons start at once, returns stay on the host; a ``reactor:`` on a minion with a master is named."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from briny.common.transport import MemoryHub
from briny.minion.agent import MinionAgent
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
