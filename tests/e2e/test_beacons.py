"""End-to-end acceptance of the minion's beacons (issue 12) with a real ``briny-master`` and two minions.

m1's config has a ``load`` beacon whose range the host is always outside (so it fires every
interval), a refused ``load`` (Salt's dict form) and an unsupported ``inotify``; m2's pillar has a
``status`` beacon. Asserted: the beacons' events arrive on the master's bus with Salt's tags and
fields, the refused ones are named in m1's log while the good one runs, and the master's reactor
matches ``salt/beacon/*/load/`` and runs a job on m2 whose return is in the job cache.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from .support import Fleet, events_until

pytestmark = pytest.mark.slow

BEACONS = {
    "load": [{"averages": {"1m": [-2.0, -1.0]}}, {"interval": 1}],  # a load is never below 0: always fires
    "oldform": {"beacon_module": "load", "averages": {"1m": [0.0, 2.0]}},
    "inotify": [{"files": {"/etc/hosts": {"mask": ["modify"]}}}],
}
PILLAR = {
    "top.sls": "base:\n  m2:\n    - beacons\n",
    "beacons.sls": """\
        beacons:
          status:
            - loadavg: ['1-min']
            - interval: 1
        """,
}
REACTION = """\
    beacon_reaction:
      local.test.arg:
        - tgt: m2
        - args:
          - source: {{ data['id'] }}
          - beacon: {{ tag }}
    """


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    root = tmp_path_factory.mktemp("beacons")
    fleet = Fleet(
        root,
        ["m2"],
        master_opts={"reactor": [{"salt/beacon/*/load/": ["salt://reactor/load.sls"]}]},
    )
    fleet.add_minion("m1", beacons=BEACONS)
    reactor = fleet.root / "srv" / "salt" / "reactor" / "load.sls"
    reactor.parent.mkdir(parents=True)
    reactor.write_text(textwrap.dedent(REACTION))
    for rel, text in PILLAR.items():
        (fleet.root / "srv" / "pillar" / rel).write_text(textwrap.dedent(text))
    try:
        fleet.start()
        yield fleet
    finally:
        fleet.close()


def _tagged(got: list[tuple[str, dict[str, Any]]], prefix: str) -> list[dict[str, Any]]:
    return [data for tag, data in got if tag.startswith(prefix)]


def test_the_load_beacon_fires_on_the_masters_bus_and_bad_beacons_are_named(fleet: Fleet) -> None:
    with fleet.listening("salt/*", "salt/test/probe") as events:
        got = events_until(events, lambda got: bool(_tagged(got, "salt/beacon/m1/load/")))
    [data] = _tagged(got, "salt/beacon/m1/load/")[:1]
    assert data["id"] == "m1"
    assert {"1m", "5m", "15m"} <= set(data) and all(isinstance(data[k], float) for k in ("1m", "5m", "15m"))
    log_file = fleet.minions["m1"].log_file
    log = fleet.wait(lambda: log_file.read_text(), 10, "m1's log")  # written before it connected
    assert "beacon 'oldform': Configuration for load beacon must be a list. (the beacon does not run)" in log
    assert "beacon 'inotify': the 'inotify' beacon is not supported by briny" in log


def test_a_beacon_from_pillar_fires_salts_status_event(fleet: Fleet) -> None:
    with fleet.listening("salt/beacon/*", "salt/beacon/probe") as events:
        got = events_until(events, lambda got: bool(_tagged(got, "salt/beacon/m2/status/")))
    [data] = _tagged(got, "salt/beacon/m2/status/")[:1]
    assert data["id"] == "m2"
    assert set(data["data"]) == {"loadavg"} and set(data["data"]["loadavg"]) == {"1-min"}


def test_the_reactor_matches_a_beacon_event_and_runs_a_job_whose_return_is_cached(fleet: Fleet) -> None:
    with fleet.listening("salt/*", "salt/test/probe") as events:
        got = events_until(events, lambda got: bool(_tagged(got, "salt/reactor/ret")))
    outcome = _tagged(got, "salt/reactor/ret")[0]
    assert outcome["reaction"] == "local.test.arg" and outcome["result"] is True, outcome
    assert outcome["tag"] == "salt/beacon/m1/load/" and outcome["minions"] == ["m2"]
    returns = fleet.wait_returns(outcome["jid"], ["m2"])
    kwargs = returns["m2"]["kwargs"]
    assert (kwargs["source"], kwargs["beacon"]) == ("m1", "salt/beacon/m1/load/"), returns
