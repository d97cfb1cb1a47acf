"""The minion bus's relay to the master (minion/busrelay.py): nothing to join at start, events held
until a session takes them, drops announced, local markers kept local."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from briny.common.event import DROPPED_TAG, READY_PREFIX, fire_event
from briny.common.transport import MemoryHub
from briny.minion.agent import MinionAgent
from briny.minion.busrelay import BusRelay

from tests.waiting import until

from .test_agent_support import RawMaster, Running, minion_opts, run, short_root  # noqa: F401 - fixtures


def test_events_fired_as_the_bus_starts_and_before_any_session_reach_the_master_in_order(short_root):  # noqa: F811
    """No probes, no master yet: the events are fired the moment the bus's socket exists, before
    the minion has a session; each reaches the master once it answers, in order. A listener's
    readiness marker stays on the host; a sender's dropped notice goes as the minion's own."""

    async def main() -> list[dict[str, Any]]:
        hub = MemoryHub()
        opts = minion_opts(short_root)
        agent = MinionAgent(opts, hub.client, event_bus=True)
        loop = asyncio.get_running_loop()
        async with Running(agent):
            await until(lambda: agent._bus is not None, 5, "the minion's bus")
            tags = [f"custom/early/{n}" for n in range(5)]
            for tag in [f"{READY_PREFIX}abc", *tags[:2]]:
                await loop.run_in_executor(None, fire_event, opts, tag, {"n": tag})
            await loop.run_in_executor(None, fire_event, opts, DROPPED_TAG, {"count": 7, "where": "sender", "pid": 9})
            for tag in tags[2:]:
                await loop.run_in_executor(None, fire_event, opts, tag, {"n": tag})
            assert agent.session is None  # all of them before any session
            master = RawMaster(hub).start()
            await master.wait_for(lambda r: r["cmd"] == "event" and r["tag"] == tags[-1])
            events = [r for r in master.requests if r["cmd"] == "event"]
        await master.stop()
        return events

    events = run(main())
    assert [e["tag"] for e in events] == [
        "custom/early/0",
        "custom/early/1",
        "salt/minion/m1/event/dropped",
        "custom/early/2",
        "custom/early/3",
        "custom/early/4",
    ]
    # what was sent, without the bus's stamps (the master wraps it with the id); the notice is briny's own
    assert all(e["data"] == {"n": e["tag"]} for e in events if e["tag"].startswith("custom/"))
    notice = events[2]["data"]
    assert notice["id"] == "m1"
    assert notice["count"] == 7 and notice["where"] == "sender" and notice["pid"] == 9


def test_past_its_limit_the_relay_drops_counts_and_tells_the_master_before_the_next_event():
    async def main() -> list[tuple[str, dict[str, Any]]]:
        sent: list[tuple[str, dict[str, Any]]] = []

        async def send(cmd: str, payload: dict[str, Any]) -> None:
            sent.append((cmd, payload))

        relay = BusRelay("m1", send, 2, asyncio.get_running_loop())
        bus = threading.Thread(target=lambda: [relay.take(f"t/{n}", {"n": n}) for n in range(5)])
        bus.start()  # the bus's thread, while the loop does not send yet
        bus.join(5)
        await until(lambda: relay.dropped == 3, 5, "three events dropped")
        assert len(relay) == 2
        task = asyncio.ensure_future(relay.run())
        await until(lambda: len(sent) == 3, 5, "the notice and the two kept events")
        relay.take("t/5", {"n": 5})
        await until(lambda: len(sent) == 4, 5, "the next event")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return sent

    sent = run(main())
    assert [cmd for cmd, _ in sent] == ["event"] * 4
    payloads = [p for _, p in sent]
    assert payloads[0]["tag"] == "salt/minion/m1/event/dropped"
    assert payloads[0]["data"]["count"] == 3 and payloads[0]["data"]["where"] == "relay"
    assert [p["tag"] for p in payloads[1:]] == ["t/0", "t/1", "t/5"]
    assert payloads[0]["data"]["id"] == "m1" and all("_stamp" not in p["data"] for p in payloads[1:])
