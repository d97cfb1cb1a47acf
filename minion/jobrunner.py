"""Running the minion daemon's jobs: publishes and local calls, each in a process or a thread.

:class:`JobRunner` takes each job once (a master may hand a publish again
after a reconnect: a jid already taken is ignored), runs it, and sends its
return to the master; a local call (``briny-call`` through
:mod:`briny.minion.localapi`) runs the same way and its caller gets the
result at once. The jids taken are kept across restarts
(:mod:`briny.minion.takenjids`), so a job the daemon was killed in is not
run again when the master hands it anew. At shutdown (:meth:`JobRunner.finish`) running jobs get a
grace period, then SIGTERM, then (job processes) SIGKILL.

Threads (``docs/DEVELOPING.md``, "Threads"):

- **the loop** owns the job table and the jids taken (:meth:`take`,
  :meth:`start`, :meth:`start_local` check it with
  :func:`briny.common.onloop.assert_on_loop`), and awaits each job;
- **job processes** (``multiprocessing: True``, the default): each job runs
  in a process of its own, through :class:`~briny.minion.procjobs.ProcessJobs`,
  which relays its channel on the loop;
- **worker threads** (``multiprocessing: False``): :meth:`_work` runs one
  job through :class:`~briny.minion.executor.Executor`, with its own
  loader; the job's ``fire_event`` hands each event to the loop
  (``to_loop``: ``asyncio.run_coroutine_threadsafe``) and never waits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import signal
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from briny.common.datacopy import copy_data
from briny.common.onloop import assert_on_loop
from briny.minion.executor import Executor, Job, JobResult
from briny.minion.jobregistry import JobRegistry
from briny.minion.takenjids import TakenJids

if TYPE_CHECKING:
    from briny.minion.procjobs import ProcessJobs

log = logging.getLogger(__name__)

WHAT = "the minion's job table"

Deliver = Callable[[str, dict[str, Any]], Coroutine[Any, Any, bool]]  # (cmd, payload): send, or keep in the outbox
ToLoop = Callable[[Coroutine[Any, Any, Any]], None]  # a worker hands a coroutine to the loop
Spawn = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any]"]  # a task the daemon tracks (loop)


class JobRunner:
    """The daemon's running jobs (see the module docstring).

    ``deliver`` sends a return or an event to the master (the agent's, which
    keeps it in the outbox when the master cannot take it); ``spawn`` starts
    a task the daemon tracks (loop); ``to_loop`` is how a worker thread
    hands a coroutine to the loop; ``procs`` runs jobs in processes (None:
    in ``pool``'s threads); ``taken`` keeps the jids taken (across restarts when it has a file).
    """

    def __init__(
        self,
        minion_id: str,
        executor: Executor,
        registry: JobRegistry,
        pool: concurrent.futures.ThreadPoolExecutor,
        procs: ProcessJobs | None,
        deliver: Deliver,
        spawn: Spawn,
        to_loop: ToLoop,
        taken: TakenJids | None = None,
        own_pool: bool = True,
    ) -> None:
        self.id = minion_id
        self.executor = executor
        self.registry = registry
        self.pool = pool
        self.own_pool = own_pool  # False: the pool is shared (briny-swarm) and its owner shuts it down
        self.procs = procs
        self.deliver = deliver
        self.spawn = spawn
        self.to_loop = to_loop
        self.accepting = True
        self._jobs: dict[str, asyncio.Task[Any]] = {}
        self._taken = taken if taken is not None else TakenJids(None)

    def __len__(self) -> int:
        return len(self._jobs)

    # -- taking jobs (loop) ----------------------------------------------------------------------
    def take(self, job: Job) -> bool:
        """Whether to run ``job``: not while shutting down, nor a jid already taken."""
        assert_on_loop(WHAT)
        if not self.accepting:
            log.info("shutting down: job %s (%s) not taken", job.jid, job.fun)
            return False
        if job.jid in self._jobs or job.jid in self._taken:
            log.debug("job %s already taken; publish ignored", job.jid)
            return False
        return True

    def start(self, job: Job) -> None:
        """Run a published job, then send its return."""
        assert_on_loop(WHAT)
        self._taken.add(job.jid)
        log.info("running job %s: %s", job.jid, job.fun)
        self._track(job.jid, asyncio.ensure_future(self._run_job(job)))

    def start_local(self, job: Job) -> "asyncio.Task[JobResult] | None":
        """Run a local call like a publish: the task gives the result at once and the return goes
        to the master after it. None while shutting down."""
        assert_on_loop(WHAT)
        if not self.accepting:
            return None
        log.info("running local call %s: %s", job.jid, job.fun)

        async def local() -> JobResult:
            result = await self._execute(job)
            # the master makes the job record for a minion's own call under a jid of its own
            # (Salt's "req"); ours goes along so a return sent twice stays one job
            self.spawn(self.deliver("ret", {**result.payload(), "jid": "req", "local_jid": job.jid}))
            return result

        task = asyncio.ensure_future(local())
        self._track(job.jid, task)
        return task

    def start_scheduled(self, job: Job, name: str, return_job: bool = True) -> asyncio.Task[JobResult] | None:
        """Run a job of the schedule's entry ``name`` (:mod:`briny.minion.scheduler`) like a local
        call: with ``return_job``, its return goes to the master's job cache (a minion's own job, as
        Salt's scheduled jobs), with ``schedule: name``; without (``mine.update`` every
        ``mine_interval``, Salt's ``mine_return_job: False``), none is sent. None while shutting
        down."""
        assert_on_loop(WHAT)
        if not self.accepting:
            return None
        log.info("running scheduled job %s (%s): %s", job.jid, name, job.fun)

        async def scheduled() -> JobResult:
            result = await self._execute(job)
            if return_job:
                load = {**result.payload(), "jid": "req", "local_jid": job.jid, "schedule": name}
                self.spawn(self.deliver("ret", load))
            return result

        task = asyncio.ensure_future(scheduled())
        self._track(job.jid, task)
        return task

    def _track(self, jid: str, task: asyncio.Task[Any]) -> None:
        self._jobs[jid] = task
        task.add_done_callback(lambda _t: self._jobs.pop(jid, None))

    # -- running (loop, and a worker thread or a job process) -------------------------------------
    async def _run_job(self, job: Job) -> None:
        result = await self._execute(job)
        await self.deliver("ret", result.payload())

    async def _execute(self, job: Job) -> JobResult:
        """Run one job in a process or a worker thread and wait for its result (loop)."""
        if self.procs is not None:
            result = await self.procs.run(job)
            log.info("job %s done (retcode %s)", job.jid, result.retcode)
            return result
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(self.pool, functools.partial(self._work, job))
        except BaseException as exc:  # the worker died (a stop signal landed outside the job)
            if isinstance(exc, asyncio.CancelledError):
                raise
            log.error("job %s ended without a result: %s", job.jid, exc)
            result = JobResult(
                job.jid,
                job.fun,
                job.fun_args(),
                f"ERROR: job ended without a result: {exc}",
                1,
                False,
                "nested",
                "exception",
            )
        log.info("job %s done (retcode %s)", job.jid, result.retcode)
        return result

    def _work(self, job: Job) -> JobResult:
        """Worker thread: run one job."""
        return self.executor.run(job, fire_event=self._job_fire(job.jid))

    def _job_fire(self, jid: str) -> Callable[[str, dict[str, Any]], None]:
        """The ``fire_event`` of one thread job's context: worker threads call it; the event goes to
        the master through the loop, carrying the job's jid and this minion's id."""

        def fire(tag: str, data: dict[str, Any]) -> None:
            # a copy made here, on the worker: the job may change what it gave once fire returns
            # (the engine's state results), while the loop packs it later
            self.to_loop(self.deliver("event", self.event_body(jid, tag, copy_data(data))))

        return fire

    def event_body(self, jid: str, tag: str, data: dict[str, Any]) -> dict[str, Any]:
        """The ``event`` request for an event a job fires: its data as the job gave it, and the job's
        jid beside it (the master fires it wrapped, ``jid`` beside ``id``, as Salt's
        ``fire_master`` with a ``preload``)."""
        return {"tag": tag, "data": data, "jid": jid}

    # -- shutdown (loop) ---------------------------------------------------------------------------
    async def finish(self, grace: float) -> None:
        """Take no more jobs; give running ones ``grace`` seconds to end and send their returns,
        then stop them (SIGTERM, then SIGKILL for job processes), then give up on them."""
        self.accepting = False
        jobs = list(self._jobs.values())
        if jobs:
            log.info("waiting up to %.1f s for %d running job(s)", grace, len(jobs))
            _, pending = await asyncio.wait(jobs, timeout=grace)
            if pending:
                stopped = self.registry.stop_all(signal.SIGTERM)
                log.warning(
                    "stopping %d job(s) still running after the grace period: %s", len(stopped), ", ".join(stopped)
                )
                _, pending = await asyncio.wait(pending, timeout=1.0)
                if pending and self.procs is not None:
                    self.registry.stop_all(signal.SIGKILL)  # a job process that ignored SIGTERM
                    _, pending = await asyncio.wait(pending, timeout=2.0)
                for task in pending:
                    task.cancel()  # its thread is stuck in a system call; no return will come

    def close(self) -> None:
        """Release the job processes' relay and the worker threads (after :meth:`finish`)."""
        if self.procs is not None:
            self.procs.close()
        if self.own_pool:
            self.pool.shutdown(wait=False, cancel_futures=True)
