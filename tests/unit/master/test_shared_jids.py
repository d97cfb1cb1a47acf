"""Two masters sharing one job cache (issue 13): every job row a master makes under a jid it minted
(its schedule, orchestrations, minions' own calls) claims the jid as a publish does, so no master's
job load is ever written over another's; a minion's own call is one job whichever masters get its
return. Each test runs on SQLite (two caches on one file) and on a real PostgreSQL (two caches on
one database)."""

from __future__ import annotations

import asyncio
import datetime
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from briny.common.ids import valid_jid
from briny.master import handlers as handlers_mod
from briny.master import orchestrate
from briny.master import scheduler as sched_mod
from briny.master.grainscache import GrainsCache
from briny.master.handlers import MinionHandlers
from briny.master.jobbook import JobBook
from briny.master.jobcache import open_job_cache
from briny.master.jobcache.base import JobCache, store_new_job
from briny.master.scheduler import MasterScheduler
from briny.master.sessions import Session
from briny.master.trust import MinionTrust

from tests.unit.master.test_jobcache import jid_at, load

HELD = jid_at(datetime.datetime(2026, 1, 1), 7)  # the jid the first master's job holds


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request, master_opts) -> Any:
    """(the masters' config, the first master's cache, the second master's cache) on one database."""
    opts = {**master_opts, "id": "salt-master"}
    if request.param == "postgres":
        opts.update({"job_cache": "postgres", "postgres.dsn": request.getfixturevalue("pg_dsn")})
    first, second = open_job_cache(opts), open_job_cache(opts)
    yield opts, first, second
    first.close()
    second.close()


def hold(cache: JobCache, jid: str = HELD, minion: str = "m1") -> None:
    """The first master publishes a job under ``jid`` (committed, with a return)."""
    assert asyncio.run(store_new_job(cache, load(jid, "test.first"), [minion])) == jid
    cache.save_return(jid, minion, {"return": "first's"})
    assert cache.flush(10)


def intact(cache: JobCache, jid: str = HELD, minion: str = "m1") -> None:
    """The first master's job is as it stored it."""
    stored = cache.get_load(jid)
    assert stored["fun"] == "test.first" and stored["jid"] == jid and stored["Minions"] == [minion]
    assert cache.get_returns(jid) == {minion: {"return": "first's"}}


def test_a_scheduled_run_never_takes_another_masters_jid(shared, monkeypatch):
    opts, first, second = shared
    hold(first)
    monkeypatch.setattr(sched_mod, "gen_jid", lambda: HELD)  # the second master mints the same jid
    events: list = []
    entry = {"lister": {"function": "jobs.list_jobs", "kwargs": {"search_function": "nothing.*"}, "seconds": 5}}
    sched = MasterScheduler({**opts, "schedule": entry}, second, lambda tag, data: events.append((tag, data)))
    ret = sched.run_entry(sched.schedule.entries["lister"])
    jid = ret["jid"]
    assert jid != HELD and valid_jid(jid)
    assert [tag for tag, _ in events] == [f"salt/run/{jid}/new", f"salt/run/{jid}/ret"]
    assert second.flush(10)
    intact(first)
    own = first.get_load(jid)
    assert own["fun"] == "runner.jobs.list_jobs" and own["schedule"] == "lister" and own["jid"] == jid
    assert first.get_returns(jid) == {"salt-master": {"return": {}, "retcode": 0, "success": True}}


@pytest.mark.parametrize("asked", [None, HELD])
def test_an_orchestration_never_takes_another_masters_jid(shared, monkeypatch, asked):
    """Minted by the run (``asked`` None) or asked for (``orchestration_jid``), a jid another master
    holds is left to it: the run is a job of its own, under a new jid, from its start."""
    opts, first, _ = shared
    hold(first)
    monkeypatch.setattr(orchestrate, "gen_jid", lambda: HELD)
    seen: dict[str, Any] = {}

    def body(session: orchestrate.Session) -> Any:
        seen["jid"] = session.jid
        seen["stored"] = first.get_load(session.jid)  # readable while the run goes on
        return {"step": {"result": True, "changes": {}, "comment": "", "name": "step"}}

    jid, running, retcode = orchestrate.run_orchestration(opts, "state.orchestrate_high", [{}], body, jid=asked)
    assert jid != HELD and valid_jid(jid) and seen["jid"] == jid and retcode == 0
    assert seen["stored"]["fun"] == "runner.state.orchestrate_high" and seen["stored"]["jid"] == jid
    intact(first)
    answer = first.get_returns(jid)["salt-master"]
    assert answer["return"]["data"] == {"salt-master": running} and answer["success"] is True


def test_a_scheduled_orchestration_reports_the_jid_it_ran_as(shared, monkeypatch, tmp_path, caplog):
    """The schedule's ``state.orchestrate`` asks for the jid it minted; when another master holds
    it the orchestration runs under a new one, and the scheduler's log lines and the run's record
    name that one (the real runner: its SLS on the master's file roots, a failing step)."""
    from briny.master.runners import state as state_runners

    opts, first, second = shared
    hold(first)
    (tmp_path / "roots").mkdir()
    (tmp_path / "roots" / "deploy.sls").write_text("step:\n  test.fail_without_changes: []\n")
    opts = {**opts, "file_roots": {"base": [str(tmp_path / "roots")]}}
    monkeypatch.setattr(sched_mod, "gen_jid", lambda: HELD)  # the second master mints the held jid
    monkeypatch.setattr(state_runners, "_master_running", lambda ctx: None)  # its steps publish nothing
    entry = {"deploy": {"function": "state.orchestrate", "args": ["deploy"], "seconds": 5}}
    sched = MasterScheduler({**opts, "schedule": entry}, second, lambda tag, data: None)
    with caplog.at_level(logging.INFO, logger="briny.master.scheduler"):
        ret = sched.run_entry(sched.schedule.entries["deploy"])
    jid = ret["jid"]
    assert jid != HELD and valid_jid(jid) and ret["retcode"] == 1 and ret["success"] is False
    said = [r.getMessage() for r in caplog.records if r.name == "briny.master.scheduler"]
    assert said == [
        f"schedule entry 'deploy': running runner state.orchestrate as job {jid}",
        f"schedule entry 'deploy': job {jid} ended with retcode 1",
    ]
    assert first.flush(10) and second.flush(10)
    intact(first)
    own = first.get_load(jid)  # the orchestration's own job, under the jid reported
    assert own["fun"] == "runner.state.orchestrate" and own["jid"] == jid
    assert first.get_returns(jid)["salt-master"]["retcode"] == 1


def test_parallel_orchestrations_each_get_a_job(shared):
    """Runs started together (``salt.parallel_runners``: threads of one master) each claim a jid."""
    opts, first, _ = shared
    jids: list[str] = []

    def run() -> None:
        jids.append(orchestrate.run_orchestration(opts, "state.orchestrate_high", [{}], lambda s: {})[0])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(set(jids)) == 4
    assert sorted(j.jid for j in first.list_jobs()) == sorted(jids)


# -- a minion's own calls (briny-call through its daemon, its schedule: jid "req") -------------------


class Master:
    """One master's return handling (master/handlers.py) over its own job book and a job cache."""

    def __init__(self, cache: JobCache, cachedir: Path) -> None:
        self.book = JobBook()
        self.fired: list[str] = []
        grains = GrainsCache(str(cachedir))
        self.handlers = MinionHandlers(
            self.book, MinionTrust(self.book, cache), grains, cache, lambda tag, data: self.fired.append(tag)
        )

    async def ret(self, minion_id: str, **payload: Any) -> dict[str, Any]:
        reply = self.handlers.ret(Session(minion_id, b"k" * 32, b"peer", 0.0), payload)
        return reply if isinstance(reply, dict) else await reply


CALL = {"fun": "test.arg", "fun_args": [1], "retcode": 0, "success": True, "return": {"args": [1]}}
LOCAL = "20260101000000000042"  # the minion's own jid


def test_a_minions_own_call_is_one_job_whichever_masters_get_it(shared, tmp_path):
    """The same return (no answer reached the minion, so it sent it again, to the other master)
    is one job: the second master answers the first's jid and writes no row."""
    _, first, second = shared

    async def main() -> tuple[dict, dict, dict]:
        a, b = Master(first, tmp_path / "a"), Master(second, tmp_path / "b")
        one = await a.ret("m1", jid="req", local_jid=LOCAL, **CALL)
        two = await b.ret("m1", jid="req", local_jid=LOCAL, **CALL)
        restarted = await Master(first, tmp_path / "c").ret("m1", jid="req", local_jid=LOCAL, **CALL)
        return one, two, restarted

    one, two, restarted = asyncio.run(main())
    assert one["ok"] and valid_jid(one["jid"]) and two == one and restarted == one
    assert first.flush(10) and second.flush(10)
    jid = one["jid"]
    assert [j.jid for j in second.list_jobs()] == [jid]
    stored = second.get_load(jid)
    assert stored["local_jid"] == LOCAL and stored["tgt"] == "m1" and stored["Minions"] == ["m1"]
    assert second.get_returns(jid) == {"m1": {"return": {"args": [1]}, "retcode": 0, "success": True}}
    # another minion's call under the same jid of its own is a job of its own
    other = asyncio.run(Master(second, tmp_path / "d").ret("m2", jid="req", local_jid=LOCAL, **CALL))
    assert other["ok"] and other["jid"] != jid and second.get_load(other["jid"])["tgt"] == "m2"


def test_two_masters_racing_one_minions_call_make_one_job(shared, tmp_path):
    """The same call's return reaching both masters at once, over and over: both answer one jid,
    and each call is one job row with one return."""
    _, first, second = shared
    locals_ = [jid_at(datetime.datetime(2026, 1, 2), n) for n in range(20)]

    async def main() -> list[tuple[dict, dict]]:
        a, b = Master(first, tmp_path / "a"), Master(second, tmp_path / "b")
        out = []
        for local in locals_:
            one, two = await asyncio.gather(
                a.ret("m1", jid="req", local_jid=local, **CALL), b.ret("m1", jid="req", local_jid=local, **CALL)
            )
            out.append((one, two))
        return out

    replies = asyncio.run(main())
    assert all(one["ok"] and one == two for one, two in replies)
    assert first.flush(10) and second.flush(10)
    jobs = first.list_jobs()
    assert sorted(j.jid for j in jobs) == sorted(one["jid"] for one, _ in replies)
    assert sorted(j.load["local_jid"] for j in jobs) == locals_
    assert all(first.returned_ids(j.jid) == ["m1"] for j in jobs)


def test_a_minions_own_call_never_takes_another_masters_jid(shared, tmp_path, monkeypatch):
    _, first, second = shared
    hold(first, minion="m2")
    monkeypatch.setattr(handlers_mod, "gen_jid", lambda: HELD)
    rep = asyncio.run(Master(second, tmp_path / "b").ret("m1", jid="req", local_jid=LOCAL, **CALL))
    assert rep["ok"] and rep["jid"] != HELD and valid_jid(rep["jid"])
    assert second.flush(10)
    intact(first, minion="m2")
    assert first.get_load(rep["jid"])["fun"] == "test.arg"
    assert first.get_returns(rep["jid"]) == {"m1": {"return": {"args": [1]}, "retcode": 0, "success": True}}


def test_a_return_reaching_both_masters_is_stored_once(shared, tmp_path):
    """A published job's return sent to both masters (the first answer was lost): the other
    master finds the job in the shared cache and the first return stays the only one; a return
    for a jid no master made is refused by both and stored by neither."""
    _, first, second = shared
    jid = jid_at(datetime.datetime(2026, 1, 1), 9)
    assert asyncio.run(store_new_job(first, load(jid, "test.ping"), ["m1"])) == jid
    stray = jid_at(datetime.datetime(2026, 1, 1), 10)

    async def main() -> list[dict]:
        a, b = Master(first, tmp_path / "a"), Master(second, tmp_path / "b")
        return [
            await a.ret("m1", jid=jid, fun="test.ping", **{"return": "a"}),
            await b.ret("m1", jid=jid, fun="test.ping", **{"return": "b"}),
            await a.ret("m1", jid=stray, fun="test.ping", **{"return": True}),
            await b.ret("m1", jid=stray, fun="test.ping", **{"return": True}),
        ]

    replies = asyncio.run(main())
    assert replies[:2] == [{"ok": True}, {"ok": True}]
    assert all("not a job of this master" in r["error"] for r in replies[2:])
    assert first.flush(10) and second.flush(10)
    assert first.get_returns(jid) == {"m1": {"return": "a"}} and first.get_load(jid)["fun"] == "test.ping"
    assert first.get_returns(stray) == {} and [j.jid for j in first.list_jobs()] == [jid]
