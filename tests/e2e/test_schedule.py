"""End-to-end minion schedule (issue 12): real daemons on 127.0.0.1.

A minion with ``schedule: {highstate: {function: state.apply, seconds: 2}}`` runs its highstate
on time, each run is a job like any other (its state wrote the file on the minion's disk, its
return is in the master's job cache); a ``schedule:`` from pillar runs too; an entry with a bad
interval is refused with a message naming it while the others run; ``schedule.*`` calls through
the master change the running schedule. Waits poll the job cache with a deadline, no sleeps.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from .support import Fleet

pytestmark = pytest.mark.slow

SCHEDULE = {
    "highstate": {"function": "state.apply", "seconds": 2},
    "broken": {"function": "test.ping", "seconds": "soon"},
    "cronned": {"function": "test.echo", "args": ["by cron"], "cron": "* * * * * */2"},  # every 2 s (6 fields)
    "badcron": {"function": "test.ping", "cron": "* * *"},
}


def jobs_of(fleet: Fleet, fun: str, minion: str) -> dict[str, Any]:
    res = fleet.run("jobs.list_jobs", f"search_function={fun}", f"search_target={minion}", "--out", "json")
    assert res.returncode == 0, res.stdout + res.stderr
    data = res.json()
    return dict(data) if isinstance(data, dict) else {}


def call(fleet: Fleet, *args: str, retcode: int = 0) -> Any:
    res = fleet.briny("--out", "json", "m1", *args)
    assert res.returncode == retcode, res.stdout + res.stderr
    return res.json()["m1"]


def test_a_scheduled_highstate_runs_on_time_and_returns_to_the_job_cache(make_fleet):
    fleet = make_fleet(["m1"], auto_accept=True)
    out = fleet.root / "m1" / "out"
    fleet.add_minion("m1", schedule=SCHEDULE, mine_enabled=False)
    srv = Path(fleet.master_opts["file_roots"]["base"][0])
    (srv / "top.sls").write_text("base:\n  m1:\n    - stamp\n")
    (srv / "stamp.sls").write_text(
        f"stamp:\n  file.managed:\n    - name: {out}/stamp\n    - makedirs: True\n    - contents: ok\n"
    )
    pillar = Path(fleet.master_opts["pillar_roots"]["base"][0])
    (pillar / "top.sls").write_text("base:\n  m1:\n    - sched\n")
    (pillar / "sched.sls").write_text(
        "schedule:\n  pinger:\n    function: test.arg\n    args: [from-pillar]\n    seconds: 1\n"
    )
    fleet.start()

    # two runs of the highstate in the job cache, each a full return of the minion's states
    runs = fleet.wait(
        lambda: (j := jobs_of(fleet, "state.apply", "m1")) and len(j) >= 2 and j, 30, "two scheduled highstates"
    )
    for jid in sorted(runs)[:2]:
        ret = fleet.wait_returns(jid, ["m1"])["m1"]
        assert isinstance(ret, dict), ret
        (state,) = ret.values()
        assert state["result"] is True and state["__id__"] == "stamp"
    assert (out / "stamp").read_text().strip() == "ok"
    # two seconds apart, as scheduled (jids are the master's arrival times: a loose bound)
    first, second = (datetime.datetime.strptime(jid, "%Y%m%d%H%M%S%f") for jid in sorted(runs)[:2])
    assert 1.0 <= (second - first).total_seconds() <= 6.0, (first, second)

    # the pillar's entry runs as well, with its args
    pings = fleet.wait(lambda: jobs_of(fleet, "test.arg", "m1"), 30, "the pillar's scheduled test.arg")
    ret = fleet.wait_returns(sorted(pings)[0], ["m1"])["m1"]
    assert ret["args"] == ["from-pillar"]

    # the cron entry runs too
    echoes = fleet.wait(lambda: jobs_of(fleet, "test.echo", "m1"), 30, "the cron entry's test.echo")
    assert fleet.wait_returns(sorted(echoes)[0], ["m1"])["m1"] == "by cron"

    # the bad entries were refused by name and logged; the minion serves
    log = (fleet.root / "m1" / "minion.log").read_text()
    assert "schedule entry 'broken': 'seconds' must be a number, not 'soon'; the entry is not scheduled" in log
    assert "schedule entry 'badcron': cron '* * *' has 3 fields" in log
    assert call(fleet, "test.ping") is True

    listed = call(fleet, "schedule.list")
    assert listed.startswith("schedule:\n") and "  highstate:\n" in listed and "    seconds: 2\n" in listed
    assert "broken" not in listed and "badcron" not in listed and "__mine" not in listed


@pytest.mark.parametrize("processes", [True, False], ids=["job-processes", "job-threads"])
def test_schedule_calls_change_the_running_schedule(make_fleet, processes):
    fleet = make_fleet(["m1"], auto_accept=True)
    fleet.add_minion("m1", mine_enabled=False, multiprocessing=processes)
    fleet.start()
    assert call(fleet, "schedule.list") == "schedule: {}\n"
    added = call(fleet, "schedule.add", "echo", "function=test.echo", "job_args=[hello]", "seconds=3600")
    assert added == {"result": True, "comment": "Added job: echo to schedule.", "changes": {"echo": "added"}}
    bad = call(fleet, "schedule.add", "bad", "function=test.ping", "seconds=-5", retcode=1)
    assert bad["result"] is False and "'bad': 'seconds' must be 0 or more" in bad["comment"]
    assert call(fleet, "schedule.list", "return_yaml=False") == {
        "echo": {
            "function": "test.echo",
            "args": ["hello"],
            "seconds": 3600,
            "enabled": True,
            "jid_include": True,
            "maxrunning": 1,
            "name": "echo",
        }
    }
    assert "    saved: false\n" in call(fleet, "schedule.list")
    assert call(fleet, "schedule.is_enabled") is True
    assert call(fleet, "schedule.is_enabled", "name=echo")["function"] == "test.echo"
    assert call(fleet, "schedule.list", "where=pillar", "return_yaml=False") == {}
    # the next run, an hour on; postponed by a minute
    nxt = call(fleet, "schedule.show_next_fire_time", "echo")["next_fire_time"]
    later = datetime.datetime.strptime(nxt, "%Y-%m-%dT%H:%M:%S") + datetime.timedelta(minutes=1)
    moved = call(fleet, "schedule.postpone_job", "echo", f"'{nxt}'", f"'{later:%Y-%m-%dT%H:%M:%S}'")
    assert moved == {"result": True, "comment": "Postponed Job echo in schedule."}
    assert call(fleet, "schedule.show_next_fire_time", "echo")["next_fire_time"] == f"{later:%Y-%m-%dT%H:%M:%S}"
    copied = call(fleet, "schedule.copy", "echo", "m2", retcode=1)
    assert (
        "needs Salt's peer publishing" in copied["comment"]
        and "schedule.add echo function=test.echo" in copied["comment"]
    )
    # run_job: now, not in an hour; the return lands in the job cache
    assert call(fleet, "schedule.run_job", "echo")["comment"] == "Scheduling Job echo on minion."
    echoes = fleet.wait(lambda: jobs_of(fleet, "test.echo", "m1"), 30, "the run_job's test.echo")
    assert fleet.wait_returns(sorted(echoes)[0], ["m1"])["m1"] == "hello"

    assert call(fleet, "schedule.save")["comment"] == "Schedule (non-pillar items) saved."
    saved = fleet.root / "m1" / "conf" / "minion.d" / "_schedule.conf"
    assert "echo" in saved.read_text()
    assert call(fleet, "schedule.disable_job", "echo")["comment"] == "Disabled Job echo in schedule."
    assert call(fleet, "schedule.run_job", "echo", retcode=1) == {
        "result": False,
        "comment": "Job echo is disabled.",
        "changes": {},
    }
    assert call(fleet, "schedule.delete", "echo")["changes"] == {"echo": "removed"}
    assert call(fleet, "schedule.list") == "schedule: {}\n"
    assert call(fleet, "schedule.reload")["result"] is True
    assert "echo" in json.dumps(call(fleet, "schedule.list", "return_yaml=False"))
    assert call(fleet, "schedule.purge") == {
        "comment": ["Deleted job: echo from schedule."],
        "changes": {"echo": "removed"},
        "result": True,
    }
    assert call(fleet, "schedule.list") == "schedule: {}\n"


MASTER_SCHEDULE = {
    "lister": {"function": "jobs.list_jobs", "kwargs": {"search_function": "test.ping"}, "seconds": 1},
    "badcron": {"function": "jobs.list_jobs", "cron": "61 * * * *"},
    "badwhen": {"function": "jobs.list_jobs", "when": "tomorrow"},
    "nope": {"function": "nosuch.runner", "seconds": 1},
}


def test_the_master_schedule_runs_a_runner_whose_job_lands_in_the_job_cache(make_fleet):
    fleet = make_fleet(["m1"], auto_accept=True, master_opts={"schedule": MASTER_SCHEDULE, "id": "salt-master"})
    fleet.add_minion("m1", mine_enabled=False)
    fleet.start()
    # a job for the scheduled runner to find
    pinged = fleet.briny("--out", "json", "m1", "test.ping")
    assert pinged.returncode == 0 and pinged.json() == {"m1": True}, pinged.stdout + pinged.stderr

    def found_the_ping() -> dict[str, Any]:
        for jid in sorted(jobs_of(fleet, "runner.jobs.list_jobs", "salt-master"), reverse=True):
            ret = fleet.run("jobs.lookup_jid", jid, "--out", "json").json()  # {master id: the runner's return}
            listed = ret.get("salt-master") if isinstance(ret, dict) else None
            if isinstance(listed, dict) and any(job.get("Function") == "test.ping" for job in listed.values()):
                return listed
        return {}

    listed = fleet.wait(found_the_ping, 30, "a scheduled jobs.list_jobs run that lists the test.ping job")
    (job,) = listed.values()
    assert job["Target"] == "m1" and job["Function"] == "test.ping"

    # each run fires its runner job events on the master bus
    watched = fleet.run("state.event", "salt/run/*/ret", "count=1", "timeout=10")
    assert watched.returncode == 0, watched.stdout + watched.stderr
    tag, body = watched.stdout.splitlines()[0].split("\t", 1)
    event = json.loads(body)
    assert tag == f"salt/run/{event['jid']}/ret" and event["fun"] == "runner.jobs.list_jobs"
    assert event["schedule"] == "lister" and event["success"] is True and event["id"] == "salt-master"

    # the bad entries were refused by name; the master serves on
    log = (fleet.master_dir / "master.log").read_text()
    assert "schedule entry 'badcron': cron '61 * * * *': minute 61 is out of range 0-59" in log
    assert "schedule entry 'badwhen': 'when': 'tomorrow' is not a date string briny reads" in log
    assert "schedule entry 'nope': runner 'nosuch.runner' is not available; the entry is not scheduled" in log
    again = fleet.briny("--out", "json", "m1", "test.ping")
    assert again.returncode == 0 and again.json() == {"m1": True}
