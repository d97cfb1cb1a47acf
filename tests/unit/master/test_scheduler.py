"""The master's schedule (master/scheduler.py, issue 12): runner entries run as runner jobs, their
events fired and their returns in the job cache; bad entries refused by name. No sleeps: the
schedule's clock is injected, the loop test waits on a condition with a deadline."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.master import scheduler as sched_mod
from briny.master.jobcache import open_job_cache
from briny.master.runners import RunnerContext
from briny.master.scheduler import MasterScheduler


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def cache(master_opts):
    jobcache = open_job_cache(master_opts)
    yield jobcache
    jobcache.close()


def make(master_opts, cache, schedule: dict[str, Any], events: list) -> tuple[MasterScheduler, Clock]:
    clock = Clock()
    opts = {**master_opts, "id": "salt-master", "schedule": schedule}
    return MasterScheduler(opts, cache, lambda tag, data: events.append((tag, data)), clock, clock), clock


def test_a_runner_entry_runs_on_time_as_a_job_in_the_cache_with_its_events(master_opts, cache):
    events: list = []
    sched, clock = make(
        master_opts,
        cache,
        {"lister": {"function": "jobs.list_jobs", "kwargs": {"search_function": "test.ping"}, "seconds": 5}},
        events,
    )
    assert sched.refused == {} and sched.schedule.due() == []
    clock.now += 5
    (entry,) = sched.schedule.due()
    ret = sched.run_entry(entry)
    sched.schedule.finished(entry.name)
    jid = ret["jid"]
    assert ret["return"] == {} and ret["success"] is True and ret["retcode"] == 0
    assert [tag for tag, _ in events] == [f"salt/run/{jid}/new", f"salt/run/{jid}/ret"]
    new = events[0][1]
    assert new["fun"] == "runner.jobs.list_jobs" and new["fun_args"] == [{"search_function": "test.ping"}]
    assert new["schedule"] == "lister" and events[1][1]["return"] == {}
    assert cache.flush(5)
    load = cache.get_load(jid)
    assert load["fun"] == "runner.jobs.list_jobs" and load["tgt"] == "salt-master" and load["schedule"] == "lister"
    assert cache.get_returns(jid)["salt-master"]["return"] == {}
    # the next run finds a job stored since, through the runner itself
    ping = "20261124060000000001"
    cache.save_load(ping, {"jid": ping, "fun": "test.ping", "arg": [], "tgt": "m1", "tgt_type": "glob"}, ["m1"])
    assert cache.flush(5)
    clock.now += 5
    (entry,) = sched.schedule.due()
    second = sched.run_entry(entry)
    assert list(second["return"]) == [ping] and second["return"][ping]["Function"] == "test.ping"


def test_return_job_false_keeps_the_job_out_of_the_cache(master_opts, cache):
    events: list = []
    sched, clock = make(
        master_opts, cache, {"quiet": {"function": "jobs.list_jobs", "seconds": 1, "return_job": False}}, events
    )
    clock.now += 1
    (entry,) = sched.schedule.due()
    ret = sched.run_entry(entry)
    assert cache.flush(5) and cache.get_load(ret["jid"]) == {}
    assert len(events) == 2  # the events still fire


def test_bad_entries_are_refused_by_name_and_the_others_kept(master_opts, cache, caplog):
    with caplog.at_level(logging.ERROR):
        sched, _ = make(
            master_opts,
            cache,
            {
                "good": {"function": "jobs.list_jobs", "minutes": 1},
                "nope": {"function": "nosuch.runner", "seconds": 1},
                "badcron": {"function": "jobs.list_jobs", "cron": "61 * * * *"},
                "badwhen": {"function": "jobs.list_jobs", "when": "tomorrow"},
            },
            [],
        )
    assert list(sched.schedule.entries) == ["good"]
    assert sched.refused["nope"] == "schedule entry 'nope': runner 'nosuch.runner' is not available"
    assert "minute 61 is out of range" in sched.refused["badcron"]
    assert "'tomorrow' is not a date string" in sched.refused["badwhen"]
    assert "runner 'nosuch.runner' is not available; the entry is not scheduled" in caplog.text


def test_a_failing_runner_returns_salt_s_unhandled_exception_with_retcode_254(master_opts, cache, monkeypatch):
    def broken(ctx: RunnerContext) -> None:
        raise CommandExecutionError("the disk is on fire")

    def buggy(ctx: RunnerContext) -> None:
        raise KeyError("oops")

    events: list = []
    sched, clock = make(
        master_opts,
        cache,
        {"a": {"function": "jobs.list_jobs", "seconds": 1}, "b": {"function": "jobs.active", "seconds": 1}},
        events,
    )
    monkeypatch.setattr(sched_mod, "get_runner", lambda name: broken if name == "jobs.list_jobs" else buggy)
    clock.now += 1
    rets = {e.name: sched.run_entry(e) for e in sched.schedule.due()}
    assert rets["a"]["return"] == "Unhandled exception running jobs.list_jobs: the disk is on fire"
    assert rets["b"]["return"] == "Unhandled exception running jobs.active"
    assert all(r["retcode"] == 254 and r["success"] is False for r in rets.values())
    assert cache.flush(5) and cache.get_returns(rets["a"]["jid"])["salt-master"]["retcode"] == 254


def test_a_runner_that_fires_its_own_events_gets_the_jid(master_opts, cache, monkeypatch):
    seen: dict[str, Any] = {}

    def orch(ctx: RunnerContext, mods: str, orchestration_jid: str | None = None) -> dict[str, Any]:
        seen["jid"] = orchestration_jid
        return {"data": {"salt-master": {}}, "outputter": "highstate", "retcode": 1}

    events: list = []
    sched, clock = make(
        master_opts, cache, {"o": {"function": "state.orchestrate", "args": ["deploy"], "seconds": 1}}, events
    )
    monkeypatch.setattr(sched_mod, "get_runner", lambda name: orch)
    clock.now += 1
    (entry,) = sched.schedule.due()
    ret = sched.run_entry(entry)
    assert seen["jid"] == ret["jid"] and events == []  # the orchestration fires new/ret itself
    assert ret["retcode"] == 1 and ret["success"] is False and ret["fun_args"] == ["deploy"]
    # ... and records its own job: the scheduler writes neither the load nor the return
    assert cache.flush(5) and cache.get_load(ret["jid"]) == {} and cache.get_returns(ret["jid"]) == {}


def test_the_task_runs_entries_until_stopped(master_opts, cache):
    async def scenario() -> list:
        events: list = []
        opts = {**master_opts, "schedule": {"fast": {"function": "jobs.list_jobs", "seconds": 0.05}}}
        master = MasterScheduler(opts, cache, lambda tag, data: events.append(tag))
        stop = asyncio.Event()
        task = asyncio.ensure_future(master.run(stop))
        deadline = asyncio.get_running_loop().time() + 10
        while len([t for t in events if t.endswith("/ret")]) < 2:
            assert asyncio.get_running_loop().time() < deadline, events
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, 10)
        return events

    events = asyncio.run(scenario())
    assert len(events) >= 4


def test_no_schedule_waits_for_stop(master_opts, cache):
    async def scenario() -> bool:
        master = MasterScheduler(master_opts, cache, lambda tag, data: None)
        stop = asyncio.Event()
        task = asyncio.ensure_future(master.run(stop))
        await asyncio.sleep(0)
        running = not task.done()
        stop.set()
        await asyncio.wait_for(task, 5)
        return running

    assert asyncio.run(scenario()) is True


def test_a_long_run_never_holds_the_stop(master_opts, cache, monkeypatch):
    import threading

    started, release = threading.Event(), threading.Event()

    def slow(ctx: RunnerContext) -> str:
        started.set()
        release.wait(30)
        return "late"

    monkeypatch.setattr(sched_mod, "get_runner", lambda name: slow)

    async def scenario() -> threading.Thread:
        opts = {**master_opts, "schedule": {"slow": {"function": "jobs.list_jobs", "seconds": 0.01}}}
        master = MasterScheduler(opts, cache, lambda tag, data: None)
        stop = asyncio.Event()
        task = asyncio.ensure_future(master.run(stop))
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, started.wait, 10)
        stop.set()
        await asyncio.wait_for(task, 2)  # the stop does not wait for the run
        (worker,) = [t for t in threading.enumerate() if t.name == "briny-schedule-slow"]
        return worker

    worker = asyncio.run(scenario())
    try:
        assert worker.daemon and worker.is_alive()
    finally:
        release.set()
        worker.join(10)
    assert not worker.is_alive()


def test_a_run_whose_job_cannot_be_stored_still_runs(master_opts, caplog):
    """The job cache refusing the run's job (here closed) is logged; the run goes on, unrecorded."""
    closed = open_job_cache(master_opts)
    closed.close()
    events: list = []
    sched, clock = make(master_opts, closed, {"lister": {"function": "jobs.list_jobs", "seconds": 1}}, events)
    clock.now += 1
    (entry,) = sched.schedule.due()
    with caplog.at_level(logging.ERROR, logger="briny.master.scheduler"):
        ret = sched.run_entry(entry)
    assert ret["success"] is True and [tag for tag, _ in events] == [
        f"salt/run/{ret['jid']}/new",
        f"salt/run/{ret['jid']}/ret",
    ]
    assert "a scheduled job could not be stored in the job cache: the job cache is closed" in caplog.text
