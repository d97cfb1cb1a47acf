"""A job survives its master killed right after the publish (issue 13): the job's row is committed
before any publish goes out, so the master, restarted, takes the minion's return for it (the
minion keeps the return while its master is down and sends it after the next auth). The order
itself (no publish before the commit) is tests/unit/master/test_server_durable.py's, with the
writer held up; here, the whole path with real daemons."""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest

from .support import Fleet

pytestmark = pytest.mark.slow


def test_a_master_killed_right_after_a_publish_takes_the_return_when_back(make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet(["d1"], auto_accept=True).start()
    daemon = fleet.minions["d1"]
    # the minion's subscription has joined the publisher (ZeroMQ drops what is published before)
    assert fleet.briny("--static", "--out", "json", "d1", "test.ping").json() == {"d1": True}
    jid = fleet.publish("d1", "test.sleep", 3)
    # killed as soon as the publish reached the minion (before that, a kill loses the publish itself)
    fleet.wait(lambda: f"running job {jid}" in daemon.log_file.read_text(), 15, "the job on the minion", 0.005)
    fleet.stop_master(signal.SIGKILL)
    assert f"job {jid} done" not in daemon.log_file.read_text()  # mid-job
    fleet.start_master()
    assert fleet.wait_returns(jid, ["d1"], timeout=40)["d1"] is True
    log = fleet.master.log_file.read_text()
    assert "is not a job of this master" not in log
