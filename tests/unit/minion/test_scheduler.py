"""The minion daemon's scheduler task (issue 12): due entries become jobs, schedule.* from the loop
and from a worker thread, the pillar's entries, and the mine's own entry. A fake clock and a fake
job runner: nothing sleeps, every wait has a deadline."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

from briny.minion.executor import Job, JobResult
from briny.minion.scheduler import MINE_ENTRY, ScheduleRunner, mine_entry
from tests.waiting import until


class FakeJobs:
    """Records each scheduled job and ends it at once."""

    def __init__(self) -> None:
        self.started: list[tuple[str, Job, bool]] = []

    def start_scheduled(self, job: Job, name: str, return_job: bool = True) -> asyncio.Task[JobResult]:
        self.started.append((name, job, return_job))

        async def done() -> JobResult:
            return JobResult(job.jid, job.fun, job.fun_args(), True, 0, True, "nested", None)

        return asyncio.ensure_future(done())


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


OPTS: dict[str, Any] = {"id": "m1", "file_client": "remote", "mine_enabled": False, "conf_dir": ""}


def test_due_entries_run_as_jobs_and_schedule_calls_reach_the_running_schedule(tmp_path):
    asyncio.run(asyncio.wait_for(_scenario(tmp_path), 20))


async def _scenario(tmp_path: Any) -> None:
    clock, jobs = Clock(), FakeJobs()
    pool = concurrent.futures.ThreadPoolExecutor(2)
    opts = {
        **OPTS,
        "conf_dir": str(tmp_path),
        "schedule": {"hs": {"function": "state.apply", "seconds": 2, "run_on_start": True}},
    }
    pillar = {
        "schedule": {
            "p": {"function": "test.arg", "args": ["x"], "kwargs": {"k": 1}, "seconds": 5, "return_job": False}
        }
    }
    runner = ScheduleRunner(opts, "m1", jobs, lambda: pillar, pool, clock=clock)  # type: ignore[arg-type]
    connected, stop = asyncio.Event(), asyncio.Event()
    task = asyncio.ensure_future(runner.run(connected, stop))
    try:
        assert jobs.started == []  # not before the first session
        connected.set()
        await until(lambda: len(jobs.started) == 1, 5, "the run_on_start entry")
        name, job, returns = jobs.started[0]
        assert (name, job.fun, job.tgt, returns) == ("hs", "state.apply", "m1", True)
        assert "p" in runner.schedule.entries  # from pillar
        await until(lambda: runner.schedule.running == {}, 5, "the job's end")

        clock.now = 5.0  # both due; the control call wakes the task
        assert runner.control("list", {})["p"]["args"] == ["x"]
        await until(lambda: len(jobs.started) == 3, 5, "the due entries")
        pjob = [j for n, j, _ in jobs.started if n == "p"][0]
        assert pjob.arg == ["x"] and pjob.kwarg == {"k": 1}
        assert [r for n, _, r in jobs.started if n == "p"] == [False]

        # from a worker thread (a thread job), through the loop
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(pool, runner.control_sync, "run_job", {"name": "hs"})
        assert answer["comment"] == "Scheduling Job hs on minion."
        await until(lambda: len(jobs.started) == 4, 5, "the run_job")
        assert runner.control("nope", {})["result"] is False
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        pool.shutdown()


def test_the_mine_runs_as_the_daemons_own_entry():
    entry = mine_entry({"file_client": "remote", "mine_enabled": True, "mine_interval": 2})
    assert entry is not None and entry.name == MINE_ENTRY
    assert (entry.function, entry.interval, entry.run_on_start, entry.return_job) == ("mine.update", 120, True, False)
    assert mine_entry({"file_client": "local", "mine_enabled": True, "mine_interval": 2}) is None
    assert mine_entry({"file_client": "remote", "mine_enabled": False, "mine_interval": 2}) is None
