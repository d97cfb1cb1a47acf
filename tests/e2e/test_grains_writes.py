"""Grains set by a job on a real minion daemon (issue 20): persisted in the minion's grains file,
seen by the next jobs and by the master's grains targeting, and still there after a restart."""

from __future__ import annotations

import signal
from typing import Any

import pytest
import yaml

from tests.waiting import wait_until


@pytest.mark.slow
def test_grains_setval_reaches_targeting_and_survives_a_restart(make_fleet: Any) -> None:
    fleet = make_fleet(["g1", "g2"])
    fleet.start()
    res = fleet.briny("--static", "--out", "json", "g1", "grains.setval", "tier", "gold")
    assert res.json() == {"g1": {"tier": "gold"}}, res.stdout + res.stderr
    grains_file = fleet.minions["g1"].conf_dir / "grains"
    assert yaml.safe_load(grains_file.read_text()) == {"tier": "gold"}

    def targeted() -> Any:
        got = fleet.briny("--static", "--out", "json", "-G", "tier:gold", "test.ping")
        return got.stdout.strip() and got.json() == {"g1": True}

    wait_until(targeted, timeout=30, what="the master's grains cache to hold g1's new grain", interval=0.2)
    res = fleet.briny("--static", "--out", "json", "g1", "state.single", "grains.list_present", "roles", "value=db")
    assert list(res.json()["g1"].values())[0]["changes"] == {"new": {"roles": ["db"]}}, res.stdout
    assert fleet.stop(fleet.minions["g1"], signal.SIGTERM) == 0
    fleet.start_minion("g1")
    res = fleet.briny("--static", "--out", "json", "-t", "30", "g1", "grains.item", "tier", "roles")
    assert res.json() == {"g1": {"tier": "gold", "roles": ["db"]}}, res.stdout + res.stderr
