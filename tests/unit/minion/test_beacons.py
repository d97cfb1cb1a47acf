"""The minion's beacons (issue 12): each built-in's config checks (Salt's messages) and events, with
host readings given by the test and a fake clock; nothing reads this machine."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any

import pytest

from briny.common.exceptions import CommandExecutionError, ConfigError
from briny.minion.beaconrunner import BeaconRunner, HostReadings
from briny.minion.beacons import Beacons, parse_beacon
from tests.waiting import until


class FakeHost:
    def __init__(self) -> None:
        self.load = (0.5, 0.5, 0.5)
        self.disks: list[tuple[str, float]] = [("/", 40.0), ("/var", 91.5), ("/home", 95.0)]
        self.running: dict[str, bool] = {"nginx": True}
        self.files: set[str] = set()
        self.status_answers: dict[str, Any] = {"loadavg": {"1-min": 0.5, "5-min": 0.4}, "meminfo": {"MemTotal": 1}}

    def loadavg(self) -> tuple[float, float, float]:
        return self.load

    def mounts(self) -> list[tuple[str, float]]:
        return self.disks

    def service_running(self, name: str) -> bool:
        return self.running.get(name, False)

    def status(self, fun: str) -> Any:
        if fun not in self.status_answers:
            raise CommandExecutionError(f"no status.{fun}")
        return self.status_answers[fun]

    def path_exists(self, path: str) -> bool:
        return path in self.files


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def make(config: dict[str, Any], clock: Clock | None = None) -> Beacons:
    beacons = Beacons("m1", 1.0, clock or Clock())
    beacons.load(config, "config")
    return beacons


def fire(beacons: Beacons, host: FakeHost, name: str, now: float = 0.0) -> list[tuple[str, dict[str, Any]]]:
    return beacons.run(beacons.beacons[name], host, now)


LOAD = {"load": [{"averages": {"1m": [0.0, 2.0], "15m": [0.1, 1.0]}}, {"interval": 10}]}


def test_load_fires_outside_its_ranges_with_salts_fields():
    host, beacons = FakeHost(), make(LOAD)
    assert fire(beacons, host, "load") == []  # 0.5 inside [0,2] and [0.1,1]
    host.load = (3.5, 1.0, 0.7)
    assert fire(beacons, host, "load") == [("salt/beacon/m1/load/", {"1m": 3.5, "5m": 1.0, "15m": 0.7, "id": "m1"})]
    host.load = (1.0, 1.0, 0.05)  # 15m below its low bound
    assert fire(beacons, host, "load")[0][1]["15m"] == 0.05


def test_load_onchangeonly_fires_when_a_bound_is_crossed_and_emitatstartup_false_holds_the_first():
    host = FakeHost()
    beacons = make({"load": [{"averages": {"1m": [0.0, 2.0]}}, {"onchangeonly": True}, {"emitatstartup": False}]})
    host.load = (3.0, 0, 0)
    assert fire(beacons, host, "load") == []  # the first reading only sets the memory
    assert fire(beacons, host, "load") == []  # still above: no change
    host.load = (1.0, 0, 0)
    assert fire(beacons, host, "load") == []  # back inside: not a crossing of the high bound upward
    host.load = (2.5, 0, 0)
    assert [tag for tag, _ in fire(beacons, host, "load")] == ["salt/beacon/m1/load/"]


def test_diskusage_fires_for_each_mount_at_or_over_its_percentage_and_takes_regexes():
    host = FakeHost()
    beacons = make({"diskusage": [{"/": "63%"}, {"^/(?!home).*$": 90}]})
    found = fire(beacons, host, "diskusage")
    assert found == [("salt/beacon/m1/diskusage/", {"diskusage": 91.5, "mount": "/var", "id": "m1"})]
    host.disks = [("/", 63.0)]
    assert [d["mount"] for _, d in fire(beacons, host, "diskusage")] == ["/"]


def test_service_fires_each_run_or_on_change_with_delay_and_unclean_shutdown():
    host, clock = FakeHost(), Clock()
    beacons = make(
        {
            "service": [
                {
                    "services": {
                        "nginx": {"onchangeonly": True, "uncleanshutdown": "/run/nginx.pid"},
                        "db": {"onchangeonly": True, "delay": 30},
                        "web": None,
                    }
                }
            ]
        },
        clock,
    )
    first = dict(fire(beacons, host, "service", 0.0))
    assert first["salt/beacon/m1/service/nginx"] == {"nginx": {"running": True}, "service_name": "nginx", "id": "m1"}
    assert "salt/beacon/m1/service/web" in first  # no onchangeonly: every run
    assert "salt/beacon/m1/service/db" not in first  # delayed 30 s
    assert "salt/beacon/m1/service/nginx" not in dict(fire(beacons, host, "service", 1.0))
    host.running["nginx"] = False
    host.files.add("/run/nginx.pid")
    changed = dict(fire(beacons, host, "service", 2.0))
    assert changed["salt/beacon/m1/service/nginx"]["nginx"] == {"running": False, "uncleanshutdown": True}
    assert "salt/beacon/m1/service/db" in dict(fire(beacons, host, "service", 31.0))
    assert "salt/beacon/m1/service/db" not in dict(fire(beacons, host, "service", 62.0))


def test_status_fires_the_asked_status_functions_under_a_time_tag():
    host = FakeHost()
    beacons = make({"status": [{"loadavg": ["1-min"]}, {"meminfo": "all"}, {"nosuch": ["all"]}, {"interval": 5}]})
    [(tag, data)] = fire(beacons, host, "status")
    assert tag.startswith("salt/beacon/m1/status/20")
    assert data == {"data": {"loadavg": {"1-min": 0.5}, "meminfo": {"MemTotal": 1}, "nosuch": {}}, "id": "m1"}
    beacons = make({"status": [{"loadavg": ["15-min"]}]})
    assert fire(beacons, host, "status")[0][1]["data"]["loadavg"].startswith("Status beacon is incorrectly configured")


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("load", {"averages": {"1m": [0, 2]}}, "beacon 'load': Configuration for load beacon must be a list."),
        ("load", [{"interval": 5}], "Averages configuration is required for load beacon."),
        ("load", [{"averages": {"2m": [0, 1]}}], "must contain 1m, 5m or 15m items."),
        ("load", [{"averages": {"1m": [0, 1, 2]}}], "must be a list of two items."),
        ("load", [{"averages": {"1m": 3}}], "must be a list of two items."),
        ("load", [{"averages": {"1m": [0, "x"]}}, {"onchangeonly": True}], "1m bounds must be numbers"),
        ("load", [{"averages": {"1m": [0, 1]}}, {"onchangeonly": "yes"}], "option onchangeonly must be a boolean."),
        ("diskusage", {"/": "50%"}, "Configuration for diskusage beacon must be a list."),
        ("diskusage", [{"/": "lots"}], "'/' needs a percentage"),
        ("diskusage", [{"(": "5%"}], "is not a valid regular expression"),
        ("service", [{"interval": 5}], "Configuration for service beacon requires services."),
        ("service", [{"services": ["nginx"]}], "Services configuration item for service beacon must be a dictionary."),
        ("service", [{"services": {"nginx": "on"}}], "must be a list of dictionaries."),
        ("status", {"loadavg": ["all"]}, "Configuration for status beacon must be a list."),
        ("inotify", [{"files": {"/etc": {}}}], "the 'inotify' beacon is not supported by briny"),
        ("load", [{"averages": {"1m": [0, 1]}}, {"interval": "soon"}], "'interval' must be a number of seconds"),
        ("load", [{"averages": {"1m": [0, 1]}}, {"interval": 0}], "'interval' must be a number of seconds"),
    ],
)
def test_a_bad_beacon_config_is_refused_with_a_message_naming_it(name, raw, message):
    with pytest.raises(ConfigError, match=f"^beacon '{name}': .*") as info:
        parse_beacon(name, raw)
    assert message in str(info.value)


def test_a_refused_beacon_is_logged_and_the_others_are_kept(caplog):
    with caplog.at_level(logging.WARNING, logger="briny.minion.beacons"):
        beacons = make({"load": {"averages": {}}, "inotify": [{"files": {}}], "web": [{"beacon_module": "diskusage"}]})
    assert set(beacons.beacons) == {"web"} and beacons.beacons["web"].module == "diskusage"
    levels = {r.getMessage().split(":")[0]: r.levelname for r in caplog.records}
    assert levels == {"beacon 'load'": "ERROR", "beacon 'inotify'": "WARNING"}
    text = caplog.text
    assert "beacon 'load': Configuration for load beacon must be a list. (the beacon does not run)" in text
    assert "'inotify' beacon is not supported by briny" in text


def test_intervals_enabled_run_once_and_the_pillars_beacons():
    clock = Clock()
    beacons = make(
        {
            "load": [{"averages": {"1m": [0, 1]}}, {"interval": 10}],
            "status": [{"run_once": True}],
            "off": [{"beacon_module": "status"}, {"enabled": False}],
        },
        clock,
    )
    assert [b.name for b in beacons.due()] == ["status"]  # no interval: now, then every loop_interval
    assert beacons.seconds_to_next() == 1.0
    host = FakeHost()
    assert fire(beacons, host, "status") and not beacons.beacons["status"].enabled  # run_once
    clock.now = 9.9
    assert beacons.due() == []
    clock.now = 10.0
    assert [b.name for b in beacons.due()] == ["load"]
    assert beacons.seconds_to_next() == 10.0
    beacons.load({"load": [{"averages": {"5m": [0, 9]}}], "disk": [{"beacon_module": "diskusage"}, {"/": 1}]}, "pillar")
    assert beacons.beacons["load"].source == "config"  # the config's wins
    assert beacons.beacons["disk"].source == "pillar"
    beacons.load({}, "pillar")
    assert "disk" not in beacons.beacons
    beacons.load({"enabled": False, "load": LOAD["load"]}, "config")
    clock.now = 100.0
    assert beacons.due() == []


def test_a_failing_reading_gives_salts_error_event_and_logs(caplog):
    class Broken(FakeHost):
        def loadavg(self) -> tuple[float, float, float]:
            raise OSError("no /proc")

    beacons = make(LOAD)
    with caplog.at_level(logging.ERROR):
        assert fire(beacons, Broken(), "load") == [("salt/beacon/m1/load/", {})]
    assert "Unable to start load beacon, no /proc" in caplog.text


def test_the_host_readings_of_this_machine_have_the_shapes_beacons_use():
    host = HostReadings(lambda: {"status.loadavg": lambda: {"1-min": 0.1}})
    assert len(host.loadavg()) == 3
    mounts = dict(host.mounts())
    assert "/" in mounts and 0.0 <= mounts["/"] <= 100.0
    assert host.status("loadavg") == {"1-min": 0.1}
    with pytest.raises(CommandExecutionError, match="status.cpustats"):
        host.status("cpustats")


def test_the_runner_sends_the_events_of_due_beacons_after_connecting():
    asyncio.run(asyncio.wait_for(_runner(), 20))


async def _runner() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def send(tag: str, data: dict[str, Any]) -> None:
        sent.append((tag, data))

    host = FakeHost()
    host.load = (5.0, 5.0, 5.0)
    opts = {"beacons": {"status": [{"meminfo": "all"}, {"interval": 3600}]}, "loop_interval": 0.05}
    pillar = {"beacons": {"load": [{"averages": {"1m": [0, 1]}}]}}
    pool = concurrent.futures.ThreadPoolExecutor(2)
    runner = BeaconRunner(opts, "m1", host, send, lambda: pillar, pool)
    connected, stop = asyncio.Event(), asyncio.Event()
    task = asyncio.ensure_future(runner.run(connected, stop))
    try:
        connected.set()
        await until(lambda: sum(tag == "salt/beacon/m1/load/" for tag, _ in sent) >= 2, 10)
        assert not any(tag.startswith("salt/beacon/m1/status/") for tag, _ in sent)  # its interval is an hour
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        pool.shutdown()
