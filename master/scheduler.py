"""The master's schedule (Salt's master ``schedule:``): runner functions run on the master on time.

``schedule:`` in the master config holds entries as the minion's do (checked by
:func:`briny.common.schedentry.parse_entry`, timed by :class:`briny.common.schedule.Schedule`),
whose ``function`` is a runner of :mod:`briny.master.runners` (``state.orchestrate``,
``jobs.list_jobs``, ``manage.status``...). An entry naming no runner is refused at start (logged,
the other entries run). :class:`MasterScheduler` runs on the master daemon's loop (one task,
started and stopped by :func:`briny.master.daemon.serve`); each due entry runs in a daemon thread
of its own (at most :data:`POOL_SIZE` at once; a long orchestration never holds the master's
workers, nor its exit) as a runner job:

- it fires ``salt/run/<jid>/new`` (``fun: runner.<name>``, ``fun_args``, ``jid``, ``user``,
  ``schedule``) and ``salt/run/<jid>/ret`` (with ``return``, ``success``, ``retcode``) on the master
  bus, as ``briny-run`` jobs do (a runner that fires its own, ``state.orchestrate``, is given the
  run's jid as ``orchestration_jid`` and fires them itself: it claims that jid, or another when a
  master sharing the job cache holds it, and tells the scheduler which through
  :attr:`~briny.master.runners.RunnerContext.on_job`, so the log and the run's record name the
  jid the run used);
- with ``return_job`` (the default) the job is in the master's job cache: its load (``fun``,
  ``arg``, ``tgt`` = the master's id, ``user``, ``schedule``) and the master's return (``return``,
  ``retcode``, ``success``), so ``briny-run jobs.list_jobs search_function='runner.*'`` and
  ``jobs.lookup_jid`` show it; its jid is claimed before the run as a publish's is
  (:func:`~briny.master.jobcache.base.store_new_job`: a new one when a master sharing the job cache
  holds it);
- a runner that raises is logged; its return is Salt's ``Unhandled exception running <fun>``
  (the error's text with briny's own errors), ``success: False``, ``retcode: 254``.
"""

from __future__ import annotations

import asyncio
import copy
import getpass
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from briny.common.args import call_function
from briny.common.exceptions import BrinyError, FunctionNotFound
from briny.common.jid import gen_jid
from briny.common.schedentry import Entry
from briny.common.schedule import Schedule
from briny.master.jobcache.base import JobCache, store_new_job_sync
from briny.master.runners import RunnerContext, fires_own_events, get_runner

log = logging.getLogger(__name__)

Fire = Callable[[str, dict[str, Any]], None]
POOL_SIZE = 4  # scheduled runners running at once (each entry's own maxrunning still applies)
UNHANDLED_RETCODE = 254


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "root"


class MasterScheduler:
    """The master's schedule and the task running it (loop); :meth:`run_entry` runs one entry."""

    def __init__(
        self,
        opts: dict[str, Any],
        jobcache: JobCache,
        fire: Fire,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.opts = opts
        self.jobcache = jobcache
        self.fire = fire
        self.id = str(opts.get("id") or "master")
        self.user = _user()
        self.schedule = Schedule(clock, wall=wall)
        self.refused = self.schedule.load(opts.get("schedule") or {}, "config")
        for name, entry in list(self.schedule.entries.items()):
            try:
                get_runner(entry.function)
            except FunctionNotFound:
                why = f"schedule entry {name!r}: runner {entry.function!r} is not available"
                log.error("%s; the entry is not scheduled", why)
                self.schedule.drop(name)
                self.refused[name] = why
        self._slots = threading.BoundedSemaphore(POOL_SIZE)

    async def run(self, stop: asyncio.Event) -> None:
        """Run the schedule until ``stop`` (loop). Each run is a daemon thread of its own (at most
        :data:`POOL_SIZE` run at once, the others wait their turn); a run still going when the
        master stops is abandoned (its job has no return), so it never holds the master's exit."""
        if not self.schedule.entries:
            await stop.wait()
            return
        log.info("the master schedule runs %d entries", len(self.schedule.entries))
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            for entry in self.schedule.due():  # the thread gets a copy: the entry is the loop's
                name = f"briny-schedule-{entry.name}"
                threading.Thread(target=self._work, args=(loop, copy.deepcopy(entry)), name=name, daemon=True).start()
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.schedule.seconds_to_next())
            except asyncio.TimeoutError:
                pass

    def _work(self, loop: asyncio.AbstractEventLoop, entry: Entry) -> None:
        """One run (its thread), then the loop is told it ended."""
        with self._slots:
            try:
                self.run_entry(entry)
            finally:
                try:
                    loop.call_soon_threadsafe(self.schedule.finished, entry.name)
                except RuntimeError:  # the loop is closed: the master stopped
                    pass

    def run_entry(self, entry: Entry) -> dict[str, Any]:
        """Run ``entry``'s runner as a job (a worker thread): its events, its job cache record;
        the master's return record (``{"fun", "fun_args", "jid", "return", "retcode", "success", ...}``)."""
        jid = gen_jid()
        name = entry.function
        fun_args: list[Any] = [*entry.args, *([dict(entry.kwargs)] if entry.kwargs else [])]
        kwargs = dict(entry.kwargs)
        fires_own = fires_own_events(name) and "orchestration_jid" not in kwargs
        # a runner that fires its own events (state.orchestrate) records its own job too: storing it
        # here as well wrote the load twice (the second over the first) and refused the second return
        stores = entry.return_job and not fires_own
        if stores:
            load = {"fun": f"runner.{name}", "arg": fun_args, "tgt": self.id, "tgt_type": "list", "jid": jid}
            claimed = self._claim({**load, "user": self.user, "schedule": entry.name})
            stores = claimed is not None
            jid = claimed or jid
        event = {"fun": f"runner.{name}", "fun_args": fun_args, "jid": jid, "user": self.user, "schedule": entry.name}
        ctx = RunnerContext(self.opts)
        ran_as: list[str] = []  # the jid a runner that records its own job claimed (another on a clash)
        if fires_own:
            kwargs["orchestration_jid"] = jid  # it fires salt/run/<jid>/new and ret itself

            def on_job(claimed: str) -> None:
                ran_as.append(claimed)
                log.info("schedule entry %r: running runner %s as job %s", entry.name, name, claimed)

            ctx.on_job = on_job
        else:
            log.info("schedule entry %r: running runner %s as job %s", entry.name, name, jid)
            self.fire(f"salt/run/{jid}/new", event)
        retcode = 0
        try:
            result = call_function(get_runner(name), name, [ctx, *entry.args], kwargs)
            retcode = ctx.context.get("retcode", 0)
            if isinstance(result, dict) and {"outputter", "data", "retcode"} <= set(result):
                retcode = result["retcode"]  # a runner's full answer (state.orchestrate)
            elif isinstance(result, dict) and set(result) == {"outputter", "data"}:
                result = result["data"]
        except (BrinyError, OSError) as exc:
            log.error("schedule entry %r: runner %s failed: %s", entry.name, name, exc)
            result, retcode = f"Unhandled exception running {name}: {exc}", UNHANDLED_RETCODE
        except Exception:  # a runner's bug must not stop the schedule
            log.exception("schedule entry %r: unhandled exception running %s", entry.name, name)
            result, retcode = f"Unhandled exception running {name}", UNHANDLED_RETCODE
        finally:
            ctx.close()
        retcode = retcode if isinstance(retcode, int) and not isinstance(retcode, bool) else 1
        if ran_as:
            jid = event["jid"] = ran_as[-1]
        ret = {**event, "id": self.id, "return": result, "retcode": retcode, "success": retcode == 0}
        if not fires_own:
            self.fire(f"salt/run/{jid}/ret", ret)
        if stores:
            self._store(self.jobcache.save_return, jid, self.id, ret)
        if retcode:
            log.warning("schedule entry %r: job %s ended with retcode %s", entry.name, jid, retcode)
        return ret

    def _claim(self, load: dict[str, Any]) -> str | None:
        """Store a scheduled run's job under a jid of its own (:func:`store_new_job_sync`: another
        one when a master sharing the job cache holds ``load["jid"]``); its jid, None when the job
        cache could not store it (logged: the run goes on, its return is not stored)."""
        try:
            return store_new_job_sync(self.jobcache, load, [self.id])
        except (BrinyError, OSError) as exc:
            log.error("a scheduled job could not be stored in the job cache: %s", exc)
            return None

    @staticmethod
    def _store(write: Callable[..., object], *args: Any) -> None:
        try:
            write(*args)
        except (BrinyError, OSError) as exc:
            log.error("a scheduled job could not be stored in the job cache: %s", exc)
