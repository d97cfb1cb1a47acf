"""The minion's job runner (minion/jobrunner.py) with a fake executor: each jid taken once, a thread
job's events cross to the loop, returns are delivered, and the job table is the loop's."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

import pytest

from briny.minion.executor import Job, JobResult
from briny.minion.jobregistry import JobRegistry
from briny.minion.jobrunner import JobRunner


class FakeExecutor:
    """Runs a job by firing one event from the worker thread and returning the thread's name."""

    def run(self, job: Job, fire_event: Any = None) -> JobResult:
        fire_event("my/tag", {"from": "job"})
        return JobResult(job.jid, job.fun, [], threading.current_thread().name)


def runner(loop: asyncio.AbstractEventLoop, sent: list, pool: concurrent.futures.ThreadPoolExecutor) -> JobRunner:
    async def deliver(cmd: str, payload: dict[str, Any]) -> bool:
        sent.append((cmd, payload))
        return True

    def to_loop(coro: Any) -> None:
        asyncio.run_coroutine_threadsafe(coro, loop)

    return JobRunner("m1", FakeExecutor(), JobRegistry(), pool, None, deliver, asyncio.ensure_future, to_loop)


def test_a_thread_job_runs_in_a_worker_and_its_event_and_return_reach_the_loop():
    async def main() -> list:
        sent: list = []
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="briny-job") as pool:
            jobs = runner(asyncio.get_running_loop(), sent, pool)
            job = Job("20260101000000000001", "test.ping")
            assert jobs.take(job)
            jobs.start(job)
            assert not jobs.take(job)  # running: a second publish of it is ignored
            local = jobs.start_local(Job("20260101000000000002", "test.echo"))
            assert local is not None and (await local).ret.startswith("briny-job")
            await jobs.finish(5)
            assert len(jobs) == 0 and not jobs.take(Job("20260101000000000003", "test.ping"))
            assert jobs.start_local(Job("20260101000000000004", "test.ping")) is None
        deadline = asyncio.get_running_loop().time() + 5
        while len([c for c, _ in sent if c == "ret"]) < 2 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        assert not jobs.take(job)  # done: still remembered as taken
        return sent

    sent = asyncio.run(main())
    events = [p for c, p in sent if c == "event"]
    # the job's jid beside its data (Salt's preload: the master fires it beside the minion's id)
    assert {e["jid"] for e in events} == {"20260101000000000001", "20260101000000000002"}
    assert all(e["tag"] == "my/tag" and "jid" not in e["data"] for e in events)
    rets = sorted((p["jid"], p.get("local_jid")) for c, p in sent if c == "ret")
    assert rets == [("20260101000000000001", None), ("req", "20260101000000000002")]


def test_the_job_table_refuses_a_worker_thread():
    async def main() -> None:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            jobs = runner(asyncio.get_running_loop(), [], pool)
            job = Job("20260101000000000001", "test.ping")
            loop = asyncio.get_running_loop()
            for call in (jobs.take, jobs.start, jobs.start_local):
                with pytest.raises(AssertionError, match="the minion's job table"):
                    await loop.run_in_executor(pool, call, job)
            assert len(jobs) == 0 and jobs.take(job)

    asyncio.run(main())


class MutatingExecutor:
    """Fires a state result, then changes its nested changes (as the engine may once fire returns)."""

    def run(self, job: Job, fire_event: Any = None) -> JobResult:
        data = {"ret": {"changes": {"diff": "old"}, "result": True}}
        fire_event("my/tag", data)
        data["ret"]["changes"]["diff"] = "changed after fire"
        data["ret"]["result"] = False
        return JobResult(job.jid, job.fun, [], True)


def test_an_event_carries_the_data_as_it_was_when_fired():
    async def main() -> list:
        sent: list = []
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            jobs = runner(asyncio.get_running_loop(), sent, pool)
            jobs.executor = MutatingExecutor()
            job = Job("20260101000000000001", "state.apply")
            assert jobs.take(job)
            jobs.start(job)
            await jobs.finish(5)
        deadline = asyncio.get_running_loop().time() + 5
        while not any(c == "ret" for c, _ in sent) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        return sent

    events = [p for c, p in asyncio.run(main()) if c == "event"]
    assert [e["data"] for e in events] == [{"ret": {"changes": {"diff": "old"}, "result": True}}]
