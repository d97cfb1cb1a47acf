"""Multi-master against real daemons: a minion with ``master: [m1, m2]`` (issue 13).

Two fleets give two real ``briny-master`` processes with their own key pairs and job caches;
the second listens on 127.0.0.2 (loopback too) with the first's ports, so one minion config's
``master_port`` / ``publish_port`` serve both, as in a real multi-master fleet.

- hot-hot (Salt's default ``master_type: str``): the minion authenticates with both masters,
  pins each one's key in its own file, runs a job from either and returns it to the master that
  published it (and only there);
- a master in the list that never answers does not stop the minion serving the other;
- a return for a master killed mid-job waits for it and reaches it once it is back;
- ``master_type: failover``: the minion serves the first master only; killed by pid, the minion
  moves to the second within ``master_alive_interval`` plus one auth;
- masters on one host with their own request and publish ports: a minion listing them as
  ``host:port`` with no ``publish_port`` subscribes where each master's auth reply says; so does
  every identity of a ``briny-swarm`` given that list.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from briny.common.transport import free_ports

from .support import Daemon, Fleet
from .test_swarm import start_swarm, stop, write_config  # noqa: F401 - start_swarm is a fixture

pytestmark = pytest.mark.slow

SECOND = "127.0.0.2"


def two_masters(make_fleet: Callable[..., Fleet], **minion: Any) -> tuple[Fleet, Fleet]:
    """(the first master's fleet with the minion ``mm``, the second master's fleet), not started."""
    first = make_fleet([], auto_accept=True)
    second = make_fleet(
        [],
        auto_accept=True,
        master_opts={"interface": SECOND, "ret_port": first.ret_port, "publish_port": first.pub_port},
    )
    first.add_minion("mm", master=["127.0.0.1", SECOND], **minion)
    return first, second


def start_both(first: Fleet, second: Fleet, serving: list[Fleet] | None = None) -> Daemon:
    """Start both masters and the minion; wait until it has a session with each of ``serving``
    (default: both)."""
    first.start_master()
    second.start_master()
    daemon = first.start_minion("mm")
    for fleet in serving or [first, second]:
        fleet.wait_connected(["mm"], 30)
    return daemon


def echo_returned(fleet: Fleet, word: str) -> str:
    jid = fleet.publish("mm", "test.echo", word)
    assert fleet.wait_returns(jid, ["mm"], timeout=20)["mm"] == word
    return jid


def test_hot_hot_takes_jobs_from_either_master_and_returns_each_to_its_own(make_fleet):
    first, second = two_masters(make_fleet)
    daemon = start_both(first, second)

    jid1 = echo_returned(first, "from-one")
    jid2 = echo_returned(second, "from-two")
    assert jid1 != jid2
    # each return went to the master that published the job, not to the other one
    assert "mm" not in second.lookup_jid(jid1)
    assert "mm" not in first.lookup_jid(jid2)
    # each master's key is pinned on its own; no shared pin was made
    pki = daemon.root / "pki"
    pins = sorted(p.name for p in pki.glob("minion_master_*.pub"))
    assert pins == [f"minion_master_127.0.0.1_{first.ret_port}.pub", f"minion_master_{SECOND}_{first.ret_port}.pub"]
    assert (pki / pins[0]).read_text() == (first.master_dir / "pki" / "master.pub").read_text()
    assert (pki / pins[1]).read_text() == (second.master_dir / "pki" / "master.pub").read_text()
    assert not (pki / "minion_master.pub").exists()


def test_an_unreachable_master_in_the_list_does_not_stop_the_others(make_fleet):
    (dead_port,) = free_ports(1)
    fleet = make_fleet([], auto_accept=True)
    fleet.add_minion("mm", master=[f"127.0.0.1:{dead_port}", "127.0.0.1"])
    fleet.start_master()
    daemon = fleet.start_minion("mm")
    fleet.wait_connected(["mm"], 30)
    echo_returned(fleet, "still-served")
    # it keeps asking the silent one, and says so
    fleet.wait(
        lambda: daemon.log_file.read_text().count(f"127.0.0.1:{dead_port} did not answer") >= 2,
        20,
        "the minion to retry the unreachable master",
    )
    echo_returned(fleet, "served-again")


def test_failover_moves_to_the_next_master_when_the_first_dies(make_fleet):
    alive = 1.0
    first, second = two_masters(make_fleet, master_type="failover", master_alive_interval=alive)
    start_both(first, second, serving=[first])
    echo_returned(first, "on-the-first")
    assert "mm" not in second.minions_state()["connected"]  # failover: one master at a time

    first.stop_master(signal.SIGKILL)
    killed = time.monotonic()
    second.wait_connected(["mm"], 30)
    moved = time.monotonic() - killed
    auth_timeout = float(first.minion_base["auth_timeout"])
    # the next ping after at most master_alive_interval goes unanswered for auth_timeout, then one auth
    assert moved <= alive + auth_timeout + 2.0, moved
    echo_returned(second, "on-the-second")


def test_a_return_for_a_killed_master_waits_for_it_and_reaches_it_back(make_fleet):
    first, second = two_masters(make_fleet)
    daemon = start_both(first, second)
    jid = second.publish("mm", "test.sleep", 4)
    first.wait(lambda: "test.sleep" in daemon.log_file.read_text(), 10, "the job to start on the minion")
    # no wait for the job cache: the job's row was committed before the publish went out
    second.stop_master(signal.SIGKILL)  # mid-job
    echo_returned(first, "first-still-served")
    # the return waits for its own master (not sent to the other one)
    first.wait(lambda: "ret kept for sending after the next auth" in daemon.log_file.read_text(), 10, "the kept ret")
    second.start_master()
    assert second.wait_returns(jid, ["mm"], timeout=30)["mm"] is True
    assert "mm" not in first.lookup_jid(jid)


def test_masters_with_their_own_ports_each_name_their_publish_port(make_fleet):
    first, second = make_fleet([], auto_accept=True), make_fleet([], auto_accept=True)
    assert len({first.ret_port, first.pub_port, second.ret_port, second.pub_port, 4505}) == 5
    masters = [f"127.0.0.1:{first.ret_port}", f"127.0.0.1:{second.ret_port}"]
    first.add_minion("mm", master=masters, master_port=None, publish_port=None)
    daemon = start_both(first, second)

    jid1 = echo_returned(first, "from-one")
    jid2 = echo_returned(second, "from-two")
    assert "mm" not in second.lookup_jid(jid1) and "mm" not in first.lookup_jid(jid2)
    text = daemon.log_file.read_text()
    for fleet in (first, second):
        assert f"127.0.0.1 publishes on port {fleet.pub_port} (not 4505): subscribing there" in text


def test_a_swarm_serves_a_master_list_hot_hot(make_fleet, start_swarm):  # noqa: F811 - the imported fixture
    first, second = make_fleet([], auto_accept=True), make_fleet([], auto_accept=True)
    first.start_master()
    second.start_master()
    root = first.root / "swarm"
    body = {k: v for k, v in first.minion_base.items() if k not in ("master_port", "publish_port")}
    masters = [f"127.0.0.1:{first.ret_port}", f"127.0.0.1:{second.ret_port}"]
    conf = write_config(root, {**body, "id": "sw", "root_dir": str(root), "log_file": "swarm.log", "master": masters})
    ids = [f"sw-{i}" for i in range(4)]
    swarm = start_swarm(conf, len(ids))
    for fleet in (first, second):
        fleet.wait_connected(ids, 60)
    for fleet in (first, second):
        res = fleet.briny("--static", "--out", "json", "*", "test.ping", timeout=60)
        assert res.returncode == 0, res.stderr
        assert res.json() == {i: True for i in ids}
    assert stop(swarm) == 0
