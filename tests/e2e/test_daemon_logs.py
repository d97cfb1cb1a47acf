"""The daemons' log files under logrotate: SIGHUP reopens them at once, and the daemons keep serving."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

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
