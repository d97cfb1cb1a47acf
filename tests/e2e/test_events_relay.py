"""End-to-end: a minion's local events reach the master's bus, whenever they are fired (issue 12,
"No silent loss").

- Fired the moment the minion daemon starts (``briny-call event.send`` on the minion's host: a job
  process that ends with ``os._exit`` right after): each event reaches the master's bus, which a
  listener joined before the minion started.
- Fired while the master is away: held by the minion and delivered once it is back, or, past the
  minion's ``outbox_max``, announced (``salt/minion/<id>/event/dropped`` with the count): every
  event fired is either stored by the master (``event_return: job_cache``) or counted, none lost
  silently (at least once: an event whose reply was lost is sent again).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from briny.common.config import load_master_config
from briny.master.jobcache import open_job_cache

from .support import Fleet, events_until

pytestmark = pytest.mark.slow


def finished(proc: subprocess.Popen[str], timeout: float = 60.0) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out + err
    return out


def test_events_sent_as_the_minion_daemon_starts_reach_the_masters_bus(make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet(["m1"], auto_accept=True)
    fleet.start()
    fleet.stop(fleet.minions["m1"])
    tags = [f"custom/early/{n}" for n in range(3)]
    with fleet.listening("custom/*", "custom/probe") as events:
        daemon = fleet.start_minion("m1")
        local_api = daemon.root / "s" / "minion_client.ipc"
        fleet.wait(local_api.exists, 30, "the minion daemon's local socket", interval=0.005)
        calls = [fleet.popen_call("m1", "event.send", tag) for tag in tags]  # at once
        for proc in calls:
            assert "True" in finished(proc)
        got = events_until(events, lambda got: set(tags) <= {tag for tag, _ in got}, timeout=20)
    by_tag = {tag: data for tag, data in got}
    assert all(by_tag[tag]["id"] == "m1" for tag in tags)


def stored(fleet: Fleet) -> list[tuple[str, dict[str, object]]]:
    cache = open_job_cache(load_master_config(str(fleet.master_conf)), readonly=True)
    try:
        return [(event.tag, event.data) for event in cache.list_events()]
    finally:
        cache.close()


@pytest.mark.parametrize("outbox_max", [None, 2])
def test_events_fired_while_the_master_is_away_are_delivered_when_it_is_back_or_announced(
    make_fleet: Callable[..., Fleet], outbox_max: int | None
) -> None:
    master_opts = {"event_return": "job_cache", "event_return_whitelist": ["custom/*", "salt/minion/*/event/*"]}
    fleet = make_fleet([], auto_accept=True, master_opts=master_opts)
    fleet.add_minion("m1", outbox_max=outbox_max)
    fleet.start()
    fleet.stop_master()
    tags = [f"custom/away/{n}" for n in range(4)]
    for tag in tags:  # one at a time: each job's return waits in the outbox too
        assert "True" in finished(fleet.popen_call("m1", "event.send", tag))
    fleet.start_master()

    def accounted() -> list[tuple[str, dict[str, object]]] | None:
        events = stored(fleet)
        delivered = {tag for tag, _ in events if tag in tags}
        counted = sum(int(str(data["count"])) for tag, data in events if tag == "salt/minion/m1/event/dropped")
        return events if len(delivered) + counted >= len(tags) else None

    # at least once: an event whose reply was lost (a master slow to answer) is sent again
    events = fleet.wait(accounted, 30, "every event delivered or counted")
    delivered = list(dict.fromkeys(tag for tag, _ in events if tag in tags))
    assert delivered == sorted(delivered)  # in the order fired
    if outbox_max is None:
        assert delivered == tags
    else:
        [notice] = [data for tag, data in events if tag == "salt/minion/m1/event/dropped"]
        assert notice["where"] == "outbox" and notice["id"] == "m1"
        assert 0 < int(str(notice["count"])) and len(delivered) < len(tags)
