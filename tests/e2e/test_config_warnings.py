"""A daemon names, once in its log at start, every config key it will not act on (Salt settings
briny does not support, and keys nobody knows), and serves all the same."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_each_daemon_names_the_keys_it_ignores_once_and_serves(make_fleet):
    fleet = make_fleet(
        ["m1"],
        auto_accept=True,
        master_opts={"gitfs_refspecs": ["+refs/heads/*:refs/remotes/origin/*"], "ext_pillar": [{"cmd_yaml": "cat x"}]},
        minion_opts={"grains_refresh_every": 5, "frobnicate": 1},
    )
    fleet.start()
    res = fleet.briny("*", "test.ping", "--out", "json")
    assert (res.returncode, res.json()) == (0, {"m1": True}), res.stderr
    master_log = fleet.master.log_file.read_text()
    minion_log = fleet.minions["m1"].log_file.read_text()
    ignored = "Salt settings briny does not support, accepted without effect (docs/migrating.md): "
    master_line = [line for line in master_log.splitlines() if ignored in line]
    assert len(master_line) == 1, master_log
    assert master_line[0].endswith(ignored + "ext_pillar, gitfs_refspecs")
    minion_lines = [line for line in minion_log.splitlines() if "briny.common.saltkeys" in line]
    assert len(minion_lines) == 2, minion_log
    assert minion_lines[0].endswith(ignored + "grains_refresh_every")
    assert minion_lines[1].endswith("minion settings nor briny's, kept only as data for config.get: frobnicate")
