"""The minion daemon's scheduler task: runs the :class:`~briny.common.schedule.Schedule` on time.

Runs on the agent's asyncio loop. It starts once the first session with the master is up (Salt's
``scheduler_before_connect: False``), adds ``schedule:`` from this minion's pillar to the one from
its config, then sleeps until the next entry is due (or a ``schedule.*`` call changes the
schedule) and starts each due entry as a job through the daemon's job runner
(:meth:`~briny.minion.jobrunner.JobRunner.start_scheduled`: a process of its own, events to the
master, and, with ``return_job`` (the default), its return in the master's job cache as a
minion's own call). ``mine.update`` every ``mine_interval`` minutes is the entry
``__mine_interval`` (run on start, no return, as Salt's ``mine_return_job: False``).

``schedule.*`` calls reach :meth:`ScheduleRunner.control` (on the loop: from a job process's
channel) or :meth:`ScheduleRunner.control_sync` (a worker thread job).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from briny.common import config
from briny.common.jid import gen_jid
from briny.common.onloop import call_on_loop
from briny.minion.executor import Job
from briny.minion.pillar import pillar_section
from briny.common.schedentry import Entry, parse_entry
from briny.common.schedule import Schedule
from briny.common.schedfile import save_path
from briny.minion.schedulectl import ACTIONS, control

if TYPE_CHECKING:
    from briny.minion.jobrunner import JobRunner

log = logging.getLogger(__name__)

MINE_ENTRY = "__mine_interval"
CONTROL_WAIT = 30.0  # seconds a thread job waits for the loop to answer a schedule.* call


def mine_entry(opts: dict[str, Any]) -> Entry | None:
    """The daemon's own ``mine.update`` entry, when the mine runs (a master, ``mine_enabled``)."""
    if opts.get("file_client") == "local" or not opts.get("mine_enabled", True):
        return None
    minutes = config.number(opts, "mine_interval")
    raw = {"function": "mine.update", "minutes": minutes, "run_on_start": True, "return_job": False}
    return parse_entry(MINE_ENTRY, {**raw, "jid_include": True, "maxrunning": 2}, "daemon")


async def nap(stop: asyncio.Event, wake: asyncio.Event, seconds: float | None) -> None:
    """Wait until ``stop`` or ``wake`` is set, or ``seconds`` pass (None: no limit) (loop): the
    timing of the daemon's schedule and beacons tasks."""
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
    try:
        await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


class ScheduleRunner:
    """The schedule of one minion daemon and the task running it (loop)."""

    def __init__(
        self,
        opts: dict[str, Any],
        minion_id: str,
        jobs: JobRunner,
        pillar: Callable[[], dict[str, Any]],
        pool: concurrent.futures.Executor,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.opts = opts
        self.id = minion_id
        self.jobs = jobs
        self.pillar = pillar  # blocking: this minion's pillar (run in ``pool``)
        self.pool = pool
        self.schedule = Schedule(clock)
        self.path = save_path(opts)
        self.schedule.load(opts.get("schedule") or {}, "config")
        mine = mine_entry(opts)
        if mine is not None:
            self.schedule.put(mine)
        self._wake: asyncio.Event | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, connected: asyncio.Event, stop: asyncio.Event) -> None:
        """Run the schedule until ``stop`` (loop)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        await connected.wait()
        await self.load_pillar()
        while not stop.is_set():
            for entry in self.schedule.due():
                self._start(entry)
            self._wake.clear()
            await nap(stop, self._wake, self.schedule.seconds_to_next())

    async def load_pillar(self) -> None:
        """Add (or replace) the entries of ``schedule:`` in this minion's pillar (loop)."""
        found, schedule = await pillar_section(self.pillar, self.pool, "schedule")
        if found:
            self.schedule.load(schedule or {}, "pillar")

    def _start(self, entry: Entry) -> None:
        job = Job(jid=gen_jid(), fun=entry.function, arg=list(entry.args), kwarg=dict(entry.kwargs), tgt=self.id)
        log.info("schedule entry %r: running %s as job %s", entry.name, entry.function, job.jid)
        task = self.jobs.start_scheduled(job, entry.name, entry.return_job)
        if task is None:
            self.schedule.finished(entry.name)
            return
        task.add_done_callback(functools.partial(self._ended, entry.name))

    def _ended(self, name: str, task: asyncio.Task[Any]) -> None:
        self.schedule.finished(name)
        if not task.cancelled() and task.exception() is None:
            result = task.result()
            if result.retcode:
                log.warning("schedule entry %r: job %s ended with retcode %s", name, result.jid, result.retcode)

    # -- schedule.* (loop, or a worker thread) -------------------------------------------------------
    def control(self, action: str, args: dict[str, Any]) -> Any:
        """One ``schedule.<action>`` call (loop); wakes the task so a change takes effect now."""
        if action not in ACTIONS:
            return {"result": False, "comment": f"schedule has no action {action!r}", "changes": {}}
        answer = control(self.schedule, action, args, self.path)
        if action == "reload" and self._loop is not None:
            task = self._loop.create_task(self.load_pillar())  # Salt's reload refreshes the pillar's entries too
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        if self._wake is not None:
            self._wake.set()
        return answer

    def control_sync(self, action: str, args: dict[str, Any]) -> Any:
        """:meth:`control` from a worker thread (a thread job), through the loop; None when the
        daemon's loop does not answer."""
        return call_on_loop(self._loop, lambda: self.control(action, args), CONTROL_WAIT, f"schedule.{action}")
