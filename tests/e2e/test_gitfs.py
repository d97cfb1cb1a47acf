"""gitfs end to end: a real master serving git remotes to a real minion (tests/golden/gitfs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.master import gitfs_cases
from tests.unit.master.gitrepos import commit

pytestmark = pytest.mark.slow

EXPECTED = gitfs_cases.CASES_FILE.parent / "expected"


def test_push_update_apply_on_a_real_minion(make_fleet: Any, tmp_path: Path) -> None:
    golden = json.loads((EXPECTED / "layout.json").read_text())
    master_opts = gitfs_cases.build(gitfs_cases.cases()["layout"], tmp_path / "repos")
    fleet = make_fleet(["m1"], auto_accept=True, master_opts=master_opts)
    fleet.start()
    res = fleet.run("fileserver.update", "--out", "json")
    assert res.returncode == 0, res.stderr
    assert set(json.loads(res.stdout)["gitfs"]["remotes"].values()) <= {"updated", "up to date"}
    listed = fleet.briny("m1", "cp.list_master", "--out", "json")
    assert json.loads(listed.stdout)["m1"] == golden["minion"]["cp.list_master"], listed.stderr
    shown = fleet.briny("m1", "state.show_highstate", "--out", "json")
    assert json.loads(shown.stdout)["m1"] == golden["minion"]["state.show_highstate"], shown.stdout
    synced = fleet.briny("m1", "saltutil.sync_modules", "--out", "json")
    assert json.loads(synced.stdout)["m1"] == ["modules.gitmod"], synced.stdout
    hello = fleet.briny("m1", "gitmod.hello", "--out", "json")
    assert json.loads(hello.stdout)["m1"] == "from git", hello.stdout
    # a push, an update, and state.apply applies the new commit
    commit(tmp_path / "repos" / "states-work", {"web/init.sls": "pushed_state:\n  test.succeed_with_changes: []\n"})
    res = fleet.run("fileserver.update", "--out", "json")
    assert json.loads(res.stdout)["gitfs"]["changed"] is True, res.stdout
    applied = fleet.briny("m1", "state.apply", "--out", "json", timeout=120)
    ids = {key.split("_|-")[1] for key in json.loads(applied.stdout)["m1"]}
    assert "pushed_state" in ids and "web_file" not in ids, applied.stdout
