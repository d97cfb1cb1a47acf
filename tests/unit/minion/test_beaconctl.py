"""``beacons.*`` (issue 12): each call's action on the running beacons, with Salt 3007's answers
(:mod:`briny.minion.beaconctl`), the execution module through the loader and the job context's
hook, and the daemon's hook from the loop and from a worker thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path
from typing import Any

import pytest
import yaml

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.minion.beaconctl import control, listing, save_path
from briny.minion.beaconrunner import BeaconRunner
from briny.minion.beacons import Beacons
from briny.minion.executor import Executor, Job
from tests.unit.minion.test_beacons import Clock, FakeHost
from tests.waiting import until

LOAD = [{"averages": {"1m": [0.0, 2.0]}}, {"interval": 10}]
STATUS = [{"loadavg": ["1-min"]}]


def beacons_with_pillar() -> Beacons:
    beacons = Beacons("m1", 1.0, Clock())
    beacons.load({"load": LOAD}, "config")
    beacons.load({"status": STATUS}, "pillar")
    return beacons


def call(beacons: Beacons, action: str, tmp_path: Path, **args: Any) -> Any:
    return control(beacons, action, args, tmp_path / "minion.d" / "beacons.conf")


def test_list_merges_config_and_pillar_and_shows_enabled_once_set(tmp_path: Path) -> None:
    beacons = beacons_with_pillar()
    assert call(beacons, "list", tmp_path) == {"load": LOAD, "status": STATUS}
    assert call(beacons, "list", tmp_path, include_pillar=False) == {"load": LOAD}
    assert call(beacons, "list", tmp_path, include_opts=False) == {"status": STATUS}
    assert call(beacons, "list_available", tmp_path) == ["load", "diskusage", "service", "status"]
    assert call(beacons, "disable", tmp_path) == {"comment": "Disabled beacons on minion.", "result": True}
    assert beacons.due() == [] and call(beacons, "list", tmp_path)["enabled"] is False
    assert call(beacons, "enable", tmp_path) == {"comment": "Enabled beacons on minion.", "result": True}
    assert {b.name for b in beacons.due()} == {"status"}  # load waits its interval; status is due


def test_add_checks_the_config_with_salts_messages(tmp_path: Path) -> None:
    beacons = beacons_with_pillar()
    disk = [{"/": "63%"}]
    assert call(beacons, "add", tmp_path, name="disk", beacon_data=[{"beacon_module": "diskusage"}, *disk]) == {
        "comment": "Added beacon: disk.",
        "result": True,
    }
    assert beacons.beacons["disk"].module == "diskusage" and beacons.beacons["disk"].source == "added"
    assert call(beacons, "add", tmp_path, name="load", beacon_data=LOAD) == {
        "comment": "Beacon load is already configured.",
        "result": True,
    }
    assert call(beacons, "add", tmp_path, name="inotify", beacon_data=[{"files": {}}]) == {
        "comment": 'Beacon "inotify" is not available.',
        "result": False,
    }
    bad = call(beacons, "add", tmp_path, name="svc", beacon_data=[{"beacon_module": "service"}])
    assert bad == {
        "comment": "Beacon svc configuration invalid, not adding.\nConfiguration for service beacon requires services.",
        "result": False,
    }
    old_form = call(beacons, "add", tmp_path, name="load2", beacon_data={"beacon_module": "load"})
    assert old_form["result"] is False and old_form["comment"].endswith("Configuration for load beacon must be a list.")
    assert "svc" not in beacons.beacons and "load2" not in beacons.beacons


def test_modify_delete_and_per_beacon_switches(tmp_path: Path) -> None:
    beacons = beacons_with_pillar()
    new = [{"averages": {"1m": [0.0, 3.0]}}, {"interval": 10}]
    assert call(beacons, "modify", tmp_path, name="nope", beacon_data=LOAD) == {
        "comment": "Beacon nope is not configured.",
        "result": True,
    }
    assert call(beacons, "modify", tmp_path, name="load", beacon_data=LOAD) == {
        "comment": "Job load in correct state",
        "result": True,
    }
    changed = call(beacons, "modify", tmp_path, name="load", beacon_data=new)
    assert changed["comment"] == "Modified beacon: load." and changed["result"] is True
    assert "-averages:{'1m': [0.0, 2.0]}\n+averages:{'1m': [0.0, 3.0]}\n" in changed["changes"]["diff"]
    assert beacons.beacons["load"].options["averages"] == {"1m": [0.0, 3.0]}
    bad = call(beacons, "modify", tmp_path, name="load", beacon_data=[{"averages": {"1m": "x"}}])
    assert bad["result"] is False and bad["comment"].startswith("Beacon load configuration invalid, not modifying.\n")
    assert call(beacons, "modify", tmp_path, name="status", beacon_data=[{"meminfo": "all"}]) == {
        "comment": "Cannot modify beacon item status, it is configured in pillar.",
        "result": False,
    }

    assert call(beacons, "disable_beacon", tmp_path, name="load") == {
        "comment": "Disabled beacon load on minion.",
        "result": True,
    }
    assert beacons.beacons["load"].enabled is False and call(beacons, "list", tmp_path)["load"][-1] == {
        "enabled": False
    }
    assert call(beacons, "enable_beacon", tmp_path, name="load")["comment"] == "Enabled beacon load on minion."
    assert call(beacons, "list", tmp_path)["load"] == new  # Salt drops the item again
    assert call(beacons, "enable_beacon", tmp_path, name="ghost") == {
        "comment": "Beacon ghost is not currently configured.",
        "result": False,
    }
    assert call(beacons, "disable_beacon", tmp_path, name="status")["comment"] == (
        "Cannot disable beacon item status, it is configured in pillar."
    )
    assert call(beacons, "enable_beacon", tmp_path, name="") == {"comment": "Beacon name is required.", "result": False}

    assert call(beacons, "delete", tmp_path, name="status") == {
        "comment": "Cannot delete beacon item status, it is configured in pillar.",
        "result": False,
    }
    assert call(beacons, "delete", tmp_path, name="load") == {"comment": "Deleted beacon: load.", "result": True}
    assert "load" not in beacons.beacons
    assert call(beacons, "frobnicate", tmp_path, name="x")["result"] is False


def test_save_writes_what_is_not_from_pillar_and_reset_forgets_it(tmp_path: Path) -> None:
    beacons = beacons_with_pillar()
    call(beacons, "add", tmp_path, name="disk", beacon_data=[{"beacon_module": "diskusage"}, {"/": 90}])
    path = tmp_path / "minion.d" / "beacons.conf"
    assert call(beacons, "save", tmp_path) == {"comment": f"Beacons saved to {path}.", "result": True}
    saved = yaml.safe_load(path.read_text())
    assert saved == {"beacons": {"load": LOAD, "disk": [{"beacon_module": "diskusage"}, {"/": 90}]}}
    reread = Beacons("m1", 1.0, Clock())  # what the minion reads at its next start
    reread.load(saved["beacons"], "config")
    assert set(reread.beacons) == {"load", "disk"} and not reread.refused

    assert call(beacons, "reset", tmp_path) == {"comment": "Beacon configuration reset.", "result": True}
    assert listing(beacons) == {"status": STATUS}
    assert call(beacons, "save", tmp_path)["result"] is True and path.read_text() == ""

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the minion.d folder should be")
    answer = control(beacons, "save", {}, blocked / "minion.d" / "beacons.conf")
    assert answer["result"] is False and answer["comment"].startswith("Unable to write to beacons file at ")
    assert save_path({"conf_file": "/etc/briny/minion"}) == Path("/etc/briny/minion.d/beacons.conf")


@pytest.fixture
def opts(tmp_path: Path) -> dict[str, Any]:
    return apply_config(
        {"id": "m1", "root_dir": str(tmp_path), "cachedir": "cache", "sock_dir": "s", "file_client": "remote"},
        MINION_DEFAULTS,
    )


def _run(opts: dict[str, Any], fun: str, *arg: Any, **kwarg: Any) -> Any:
    return Executor(opts, dict, beacons=opts.get("_hook")).run(Job("20240101000000000001", fun, list(arg), kwarg))


def test_the_module_answers_through_the_jobs_hook_as_salt(opts: dict[str, Any], tmp_path: Path) -> None:
    beacons = beacons_with_pillar()
    hook_opts = {**opts, "_hook": lambda action, args: call(beacons, action, tmp_path, **args)}
    listed = _run(hook_opts, "beacons.list")
    assert listed.error is None and yaml.safe_load(listed.ret) == {"beacons": {"load": LOAD, "status": STATUS}}
    assert _run(hook_opts, "beacons.list", return_yaml=False, include_pillar=False).ret == {"load": LOAD}
    assert yaml.safe_load(_run(hook_opts, "beacons.list_available").ret)["beacons"][0] == "load"
    added = _run(hook_opts, "beacons.add", "disk", [{"beacon_module": "diskusage"}, {"/": 90}])
    assert added.ret == {"comment": "Added beacon: disk.", "result": True}
    assert _run(hook_opts, "beacons.delete", "disk", test=True).ret == {
        "comment": "Beacon: disk would be deleted.",
        "result": True,
    }
    assert "disk" in beacons.beacons
    assert _run(hook_opts, "beacons.disable_beacon", "disk").ret["comment"] == "Disabled beacon disk on minion."
    assert _run(hook_opts, "beacons.reset", test=True).ret == {"comment": "Beacons would be reset.", "result": True}
    assert _run(hook_opts, "beacons.enable_beacon", "").ret == {"comment": "Beacon name is required.", "result": False}


def test_without_a_daemon_the_module_says_so(opts: dict[str, Any]) -> None:
    assert _run(opts, "beacons.list").ret == "beacons: null\n"  # Salt's salt-call --local without a minion
    assert _run(opts, "beacons.list_available", return_yaml=False).ret == {"beacons": {}}
    assert _run(opts, "beacons.add", "load", LOAD).ret == {
        "result": False,
        "comment": "Event module not available. Beacon add failed.",
    }
    local = {**opts, "file_client": "local"}  # masterless: asks this host's daemon, and none runs
    assert _run(local, "beacons.enable").ret["comment"] == "Event module not available. Beacon enable failed."


def test_the_daemons_hook_changes_the_running_beacons_from_the_loop_and_a_worker(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(_daemon_scenario(tmp_path), 20))


async def _daemon_scenario(tmp_path: Path) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def send(tag: str, data: dict[str, Any]) -> None:
        sent.append((tag, data))

    clock = Clock()
    pool = concurrent.futures.ThreadPoolExecutor(2)
    host = FakeHost()
    opts = {"id": "m1", "conf_dir": str(tmp_path), "beacons": {}}
    runner = BeaconRunner(opts, "m1", host, send, dict, pool, clock=clock, wall=lambda: 0.0)
    connected, stop = asyncio.Event(), asyncio.Event()
    connected.set()
    task = asyncio.ensure_future(runner.run(connected, stop))
    try:
        await until(lambda: runner._loop is not None, 5, "the beacon task")
        assert runner.control("nope", {}) == {"result": False, "comment": "beacons has no action 'nope'"}
        loop = asyncio.get_running_loop()
        # a thread job adds a load beacon the host is outside of: it runs at once (the task wakes)
        data = [{"averages": {"1m": [0.0, 0.1]}}]
        answer = await loop.run_in_executor(pool, runner.control_sync, "add", {"name": "load", "beacon_data": data})
        assert answer == {"comment": "Added beacon: load.", "result": True}
        await until(lambda: any(tag == "salt/beacon/m1/load/" for tag, _ in sent), 5, "the added beacon's event")
        assert runner.control("save", {})["comment"] == f"Beacons saved to {tmp_path / 'minion.d' / 'beacons.conf'}."
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        pool.shutdown()
