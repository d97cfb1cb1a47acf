"""End-to-end: a masterless ``briny-minion`` (``master_type: disable``, ``file_client: local``) with
its own reactor and beacons (issue 12), a real daemon and no master.

Asserted: an event fired on the minion's bus (``briny-call event.fire``) starts a reactor SLS whose
``caller.file.touch`` touches a file (checked on disk) and fires ``salt/reactor/ret`` on the
minion's bus; a beacon's event on that bus starts another reaction; a reaction naming a function
the minion does not have, or a ``local.*`` one (it needs a master), is reported on the bus and
the daemon keeps reacting; ``beacons.*`` and ``schedule.*`` from ``briny-call`` change the daemon's
running beacons and schedule (a job added so runs in the daemon).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .support import Fleet, FleetError, Result, events_until, script

pytestmark = pytest.mark.slow

MINION = "solo"
TOUCH = """\
    touch_it:
      caller.file.touch:
        - args:
          - name: {{ data['path'] }}
    """
BEACON_TOUCH = """\
    beacon_fired:
      caller.file.touch:
        - args:
          - name: {{ data['marker'] if 'marker' in data else '%s' }}
    """
BROKEN = """\
    no_such_function:
      caller.nosuch.thing:
        - args:
          - name: x
    needs_a_master:
      local.test.ping:
        - tgt: '*'
    """


@pytest.fixture(scope="module")
def solo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Fleet, Path]]:
    root = tmp_path_factory.mktemp("masterless")
    fleet = Fleet(root, [])
    srv = fleet.root / "srv" / "salt"
    (srv / "reactor").mkdir(parents=True)
    marks = fleet.root / "marks"
    marks.mkdir()
    (srv / "reactor" / "touch.sls").write_text(textwrap.dedent(TOUCH))
    (srv / "reactor" / "beacon.sls").write_text(textwrap.dedent(BEACON_TOUCH % (marks / "beacon")))
    (srv / "reactor" / "broken.sls").write_text(textwrap.dedent(BROKEN))
    fleet.add_minion(
        MINION,
        master_type="disable",
        file_client="local",
        file_roots={"base": [str(srv)]},
        reactor=[
            {"custom/touch/*": ["salt://reactor/touch.sls"]},
            {"custom/broken": ["salt://reactor/broken.sls"]},
            {f"salt/beacon/{MINION}/load/": ["salt://reactor/beacon.sls"]},
        ],
        beacons={"load": [{"averages": {"1m": [-2.0, -1.0]}}, {"interval": 1}]},  # a load is never below 0
    )
    try:
        fleet.start_minion(MINION)
        yield fleet, marks
    finally:
        fleet.close()


def call(fleet: Fleet, *args: str, timeout: float = 60.0) -> Result:
    """``briny-call`` with the minion's config (masterless: runs here, reaches the daemon's bus)."""
    conf = fleet.minions[MINION].conf_dir
    argv = [*script("briny-call"), "-c", str(conf), *args]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Result(argv, done.returncode, done.stdout, done.stderr, time.monotonic() - start)


def minion_opts(fleet: Fleet) -> dict[str, Any]:
    from briny.common.config import load_minion_config

    return load_minion_config(str(fleet.minions[MINION].conf_dir))


def serving(fleet: Fleet) -> None:
    """Wait until the minion daemon listens on its local socket."""
    from briny.common.exceptions import MinionNotRunning
    from briny.minion.localapi import LocalClient

    client = LocalClient(minion_opts(fleet))

    def up() -> bool:
        try:
            client.check_running()
        except MinionNotRunning:
            return False
        return True

    fleet.wait(up, 30, "the minion's local socket")


def listening(fleet: Fleet, tag_glob: str) -> Any:
    """A listener on the minion's own bus, proven subscribed (probes tagged as the glob, ``*`` as "probe")."""
    from briny.common.event import EventBus, EventListener, EventSender
    from tests.waiting import join_listener

    opts = minion_opts(fleet)
    fleet.wait(lambda: Path(EventBus(opts, name="minion").pub_path).exists(), 30, "the minion's event bus")
    listener = EventListener(opts, tag_glob, name="minion")
    sender = EventSender(opts, name="minion")
    try:
        join_listener(listener, sender.fire, tag_glob.replace("*", "probe"))
    except BaseException:
        listener.close()
        raise
    finally:
        sender.close()
    return listener


def _touch_one(tag: str, data: Any) -> bool:
    return tag == "salt/reactor/ret" and data.get("tag") == "custom/touch/one"


def test_an_event_on_the_minions_bus_runs_a_caller_reaction(solo: tuple[Fleet, Path]) -> None:
    fleet, marks = solo
    target = marks / "from-event"
    with listening(fleet, "salt/reactor/*") as events:
        fired = call(fleet, "event.fire", json.dumps({"path": str(target)}), "custom/touch/one", "--out=json")
        assert fired.returncode == 0 and json.loads(fired.stdout) == {"local": True}, fired
        # the load beacon's own reaction returns every second too: wait for this event's
        got = events_until(events, lambda got: any(_touch_one(tag, data) for tag, data in got))
    outcome = next(data for tag, data in got if _touch_one(tag, data))
    assert outcome["reaction"] == "caller.file.touch" and outcome["result"] is True, outcome
    assert outcome["tag"] == "custom/touch/one" and outcome["id"] == "touch_it"
    assert target.is_file()


def test_a_beacon_on_the_masterless_minion_reaches_its_reactor(solo: tuple[Fleet, Path]) -> None:
    fleet, marks = solo
    fleet.wait(lambda: (marks / "beacon").is_file(), 30, "the beacon's reaction to touch its file")


def test_a_broken_reaction_is_reported_and_the_daemon_keeps_reacting(solo: tuple[Fleet, Path]) -> None:
    fleet, marks = solo
    with listening(fleet, "salt/reactor/*") as events:
        call(fleet, "event.fire", "{}", "custom/broken")
        got = events_until(events, lambda got: len([t for t, _ in got if t == "salt/reactor/error"]) >= 2)
    errors = {data["id"]: data["error"] for tag, data in got if tag == "salt/reactor/error"}
    assert "'nosuch.thing' is not available" in errors["no_such_function"], errors
    assert errors["needs_a_master"].startswith("Reactor 'needs_a_master': local.test.ping needs a master"), errors
    after = marks / "after-broken"
    call(fleet, "event.fire", json.dumps({"path": str(after)}), "custom/touch/two")
    fleet.wait(after.is_file, 30, "a reaction after the broken one")


def test_beacons_functions_change_the_running_daemons_beacons(solo: tuple[Fleet, Path]) -> None:
    fleet, _ = solo

    def listed() -> Any:
        out = call(fleet, "beacons.list", "return_yaml=False", "--out=json")
        return json.loads(out.stdout)["local"] if out.returncode == 0 else None

    assert fleet.wait(listed, 30, "beacons.list from the daemon") == {
        "load": [{"averages": {"1m": [-2.0, -1.0]}}, {"interval": 1}]
    }
    with listening(fleet, f"salt/beacon/{MINION}/disk/*") as events:
        added = call(
            fleet, "beacons.add", "disk", "[{beacon_module: diskusage}, {'/': 0}, {interval: 1}]", "--out=json"
        )
        assert json.loads(added.stdout)["local"] == {"comment": "Added beacon: disk.", "result": True}, added
        got = events_until(events, lambda got: bool(got))
    assert got[0][1]["mount"] == "/" and got[0][1]["id"] == MINION
    unknown = call(fleet, "beacons.add", "inotify", "[{files: {}}]", "--out=json")
    assert json.loads(unknown.stdout)["local"] == {"comment": 'Beacon "inotify" is not available.', "result": False}
    bad = call(fleet, "beacons.add", "svc", "[{beacon_module: service}]", "--out=json")
    assert json.loads(bad.stdout)["local"]["comment"] == (
        "Beacon svc configuration invalid, not adding.\nConfiguration for service beacon requires services."
    )
    assert call(fleet, "beacons.delete", "disk", "--out=json").returncode == 0
    assert set(fleet.wait(listed, 30, "beacons.list after delete")) == {"load"}
    if not fleet.minions[MINION].running:
        raise FleetError(f"the minion stopped\n{fleet.logs()}")


def test_schedule_functions_change_the_running_daemons_schedule(solo: tuple[Fleet, Path]) -> None:
    """``briny-call schedule.*`` (it runs the function itself) reaches the daemon's running schedule
    over its local socket: the job added there runs, and stops once deleted."""
    fleet, marks = solo
    target = marks / "scheduled"

    def listed() -> Any:
        out = call(fleet, "schedule.list", "return_yaml=False", "--out=json")
        return json.loads(out.stdout)["local"] if out.returncode == 0 else None

    serving(fleet)  # from here on the daemon answers: {} is its schedule's answer, not "no daemon"
    assert listed() == {}
    added = call(
        fleet, "schedule.add", "toucher", "function=file.touch", f"job_args=[{target}]", "seconds=1", "--out=json"
    )
    assert json.loads(added.stdout)["local"] == {
        "comment": "Added job: toucher to schedule.",
        "result": True,
        "changes": {"toucher": "added"},
    }, added
    job = listed()["toucher"]
    assert job["function"] == "file.touch" and job["args"] == [str(target)] and job["seconds"] == 1, job
    fleet.wait(target.is_file, 30, "the scheduled file.touch to run in the daemon")
    again = call(fleet, "schedule.add", "toucher", "function=test.ping", "seconds=1", "--out=json")
    assert json.loads(again.stdout)["local"]["comment"] == "Job toucher already exists in schedule.", again
    deleted = call(fleet, "schedule.delete", "toucher", "--out=json")
    assert json.loads(deleted.stdout)["local"]["result"] is True, deleted
    assert listed() == {}
    if not fleet.minions[MINION].running:
        raise FleetError(f"the minion stopped\n{fleet.logs()}")


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "beacons"


def test_beacons_functions_answer_as_salts_on_a_running_masterless_minion(tmp_path: Path) -> None:
    """Each call of tests/golden/beacons/calls.yaml, in order, against a fresh masterless minion:
    exit status and answer as the reference salt-call gave them on a running salt-minion."""
    spec = yaml.safe_load((GOLDEN / "calls.yaml").read_text())
    want = json.loads((GOLDEN / "expected.json").read_text())
    fleet = Fleet(tmp_path, [])
    try:
        fleet.add_minion("solo", master_type="disable", file_client="local", **spec["config"])
        daemon = fleet.start_minion("solo")
        conf = str(daemon.conf_dir)
        # the daemon's answer, not briny-call's own "no running beacons" (None) from before it listens
        fleet.wait(
            lambda: _answers(conf, "beacons.list", "return_yaml=False") != (0, None), 30, "the masterless minion"
        )
        got = []
        for name, *args in spec["calls"]:
            rc, data = _answers(conf, *map(str, args))
            got.append({"name": name, "args": args, "rc": rc, "data": data})
        for mine, salts in zip(got, want, strict=True):
            assert mine == salts, f"{mine['name']}: briny {mine} != Salt {salts}"
    finally:
        fleet.close()


def _answers(conf: str, *args: str) -> tuple[int, Any]:
    done = subprocess.run(
        [*script("briny-call"), "-c", conf, *args, "--out=json"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    data = json.loads(done.stdout)["local"] if done.stdout.strip() else None
    return done.returncode, json.loads(json.dumps(data).replace(conf, "@CONF@"))


def test_an_event_fired_as_the_masterless_daemon_starts_reaches_its_reactor(tmp_path: Path) -> None:
    """Fired the moment the daemon's bus exists (before its reactor may listen), by ``briny-call``
    and by the schedule's first job (``run_on_start``): still reacted to."""
    from briny.common.event import EventBus

    fleet = Fleet(tmp_path, [])
    srv = fleet.root / "srv" / "salt"
    (srv / "reactor").mkdir(parents=True)
    (srv / "reactor" / "touch.sls").write_text(textwrap.dedent(TOUCH))
    scheduled = fleet.root / "scheduled"
    fleet.add_minion(
        MINION,
        master_type="disable",
        file_client="local",
        file_roots={"base": [str(srv)]},
        reactor=[{"custom/touch/*": ["salt://reactor/touch.sls"]}],
        schedule={
            "early": {
                "function": "event.send",
                "args": ["custom/touch/scheduled"],
                "kwargs": {"path": str(scheduled)},
                "hours": 1,
                "run_on_start": True,
            }
        },
    )
    targets = [fleet.root / f"early-{n}" for n in range(3)]
    with fleet:
        fleet.start_minion(MINION)
        pull = Path(EventBus(minion_opts(fleet), name="minion").pull_path)
        fleet.wait(pull.exists, 30, "the minion's event bus", interval=0.005)
        procs = [
            fleet.popen_call(MINION, "event.fire", json.dumps({"path": str(t)}), f"custom/touch/{n}")
            for n, t in enumerate(targets)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0 and "True" in out, out + err
        touched = [*targets, scheduled]
        fleet.wait(lambda: all(t.is_file() for t in touched), 30, "the reactions to the early events")
