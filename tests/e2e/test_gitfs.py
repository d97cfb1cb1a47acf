"""gitfs end to end: a real master serving git remotes to a real minion (tests/golden/gitfs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.master import gitfs_cases
from tests.unit.master.gitrepos import commit
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

EXPECTED = gitfs_cases.CASES_FILE.parent / "expected"


def test_push_update_apply_on_a_real_minion(make_fleet: Any, tmp_path: Path) -> None:
    golden = json.loads((EXPECTED / "layout.json").read_text())
    master_opts = {**gitfs_cases.build(gitfs_cases.cases()["layout"], tmp_path / "repos"), "fileserver_events": True}
    fleet = make_fleet(["m1"], auto_accept=True, master_opts=master_opts)
    fleet.start()

    def listed_by_master() -> Any:  # the master's own loop fetches its remotes at start
        got = fleet.briny("m1", "cp.list_master", "--out", "json")
        return got.returncode == 0 and json.loads(got.stdout)["m1"] == golden["minion"]["cp.list_master"]

    wait_until(listed_by_master, timeout=60, what="the master's first gitfs update", interval=0.5)
    res = fleet.run("fileserver.update", "--out", "json")
    assert res.returncode == 0, res.stderr
    assert set(json.loads(res.stdout)["gitfs"]["remotes"].values()) <= {"updated", "up to date"}
    listed = fleet.briny("m1", "cp.list_master", "--out", "json")
    assert json.loads(listed.stdout)["m1"] == golden["minion"]["cp.list_master"], listed.stderr
    shown = fleet.briny("m1", "state.show_highstate", "--out", "json")
    assert json.loads(shown.stdout)["m1"] == golden["minion"]["state.show_highstate"], shown.stdout
    synced = json.loads(fleet.briny("m1", "saltutil.sync_all", "--out", "json").stdout)["m1"]
    assert (synced["modules"], synced["states"], synced["grains"]) == (
        ["modules.gitmod"],
        ["states.gitstate"],
        ["grains.gitgrain"],
    ), synced
    hello = fleet.briny("m1", "gitmod.hello", "--out", "json")
    assert json.loads(hello.stdout)["m1"] == "from git", hello.stdout
    grain = fleet.briny("m1", "grains.get", "from_git", "--out", "json")
    assert json.loads(grain.stdout)["m1"] is True, grain.stdout
    # a push, an update, and state.apply applies the new commit
    pushed = "pushed_state:\n  gitstate.done: []\n"  # the custom state synced from git
    commit(tmp_path / "repos" / "states-work", {"web/init.sls": pushed})
    with fleet.listening("salt/fileserver/*", "salt/fileserver/probe") as events:
        res = fleet.run("fileserver.update", "--out", "json")
        assert json.loads(res.stdout)["gitfs"]["changed"] is True, res.stdout
        got = events.get_event(10)
        while got is not None and got[0] != "salt/fileserver/gitfs/update":
            got = events.get_event(10)
    assert got is not None and got[1]["changed"] is True and got[1]["backend"] == "gitfs", got
    applied = fleet.briny("m1", "state.apply", "--out", "json", timeout=120)
    results = {key.split("_|-")[1]: ret for key, ret in json.loads(applied.stdout)["m1"].items()}
    assert "web_file" not in results, applied.stdout
    assert (results["pushed_state"]["result"], results["pushed_state"]["comment"]) == (True, "git state")
