"""The daemons' log files under logrotate: SIGHUP reopens them at once, and the daemons keep serving."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from briny.common.transport import free_ports

pytestmark = pytest.mark.slow


def text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def test_sighup_makes_each_daemon_write_a_new_log_file(make_fleet):
    fleet = make_fleet(["m1"], auto_accept=True)
    fleet.start()
    minion = fleet.minions["m1"]
    for daemon in (fleet.master, minion):
        rotated = daemon.log_file.with_name(daemon.log_file.name + ".1")
        daemon.log_file.rename(rotated)  # what logrotate does
        os.kill(daemon.pid, signal.SIGHUP)
        fleet.wait(
            lambda daemon=daemon: "reopened the log file" in text(daemon.log_file),
            20,
            f"{daemon.name} to reopen its log file",
        )
        assert daemon.running, f"{daemon.name} died of SIGHUP"
        assert "reopened the log file" not in text(rotated)
    res = fleet.briny("*", "test.ping", "--out", "json")
    assert (res.returncode, res.json()) == (0, {"m1": True}), res.stderr
    fleet.wait(lambda: "running job" in text(minion.log_file), 20, "the minion's job in its new log")
    fleet.wait(lambda: "Got return from m1" in text(fleet.master.log_file), 20, "the return in the master's new log")
    # nothing went on in the renamed files (each daemon wrote its new lines to the new file)
    assert "running job" not in text(minion.log_file.with_name(minion.log_file.name + ".1"))
    assert "Got return" not in text(fleet.master.log_file.with_name(fleet.master.log_file.name + ".1"))


def test_a_master_that_cannot_be_reached_is_named_at_the_default_log_level(make_fleet):
    """As Salt's minion says it (an ERROR naming the host, then retries), never a silent wait: a
    ``master`` whose name does not resolve, and one that never answers. The log files are at
    their default level (warning); no master runs at all."""
    fleet = make_fleet([])
    (silent_port,) = free_ports(1)  # nothing listens there
    lost = fleet.add_minion("lost", master="nonexistent.invalid", log_level=None)
    mute = fleet.add_minion("mute", master="127.0.0.1", master_port=silent_port, auth_timeout=1, log_level=None)
    for daemon in (lost, mute):
        fleet.start_minion(daemon.name)
    fleet.wait(lambda: "DNS lookup" in text(lost.log_file), 20, "the unresolvable master named in the log")
    fleet.wait(lambda: "did not answer" in text(mute.log_file), 20, "the silent master named in the log")
    assert lost.running and mute.running  # they keep trying
    [dns] = [line for line in text(lost.log_file).splitlines() if "DNS lookup" in line]
    assert "[ERROR   ]" in dns and "DNS lookup of the master 'nonexistent.invalid' failed (" in dns
    assert dns.endswith(
        "; set 'master' in the minion config to a name that resolves; retrying (said again every 60 s while it lasts)"
    )
    [silent] = [line for line in text(mute.log_file).splitlines() if "did not answer" in line]
    assert "[ERROR   ]" in silent and silent.endswith(
        f"the master 127.0.0.1:{silent_port} did not answer the auth request within 1 s; retrying (said again "
        "every 60 s while it lasts)"
    )
