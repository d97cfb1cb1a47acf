"""The daemon's side of process jobs (``multiprocessing: True``): start, relay, report.

Runs on the minion daemon's asyncio loop (blocking work, such as fetching
pillar from the master or refreshing grains, goes to the agent's worker
pool). For each job :meth:`ProcessJobs.run`:

1. registers the job in the daemon's :class:`~briny.minion.jobregistry.JobRegistry`
   (``saltutil`` and ``state.running`` read it through the channel), waiting
   for a slot when ``process_count_max`` is reached;
2. asks the launcher (:mod:`briny.minion.launcher`) for a process, with one
   end of a fresh socketpair as its channel, and sends it the job and the
   current grains;
3. answers the job's requests (``docs/PROTOCOL.md``, "Daemon and job
   process"): relays ``request`` to the master, forwards ``event``, serves
   its pillar and the job registry, signals other jobs, refreshes pillar
   and grains;
4. takes its ``return``; a process that ended without one (killed by a
   signal, ``os._exit``, a segfault) is reported as a return saying so
   (retcode 1), and its proc file is removed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from briny.common import config, modfolders
from briny.common.exceptions import BrinyError, LauncherGone
from briny.common.jobcontext import RunningJob
from briny.common.numbers import positive
from briny.minion.executor import EX_GENERIC, Job, JobResult
from briny.minion.pillar import LocalPillar
from briny.minion.jobregistry import JobRegistry, killed_message
from briny.minion.jobchannel import frame, read_frame
from briny.minion.launcher import Launcher

log = logging.getLogger(__name__)

RETURN_GRACE = 5.0  # seconds a job process has to close its channel after its return
EXIT_WAIT = 5.0  # seconds to wait for the launcher's report of a process that sent no return


@dataclasses.dataclass
class DaemonLinks:
    """What the relay reaches in the daemon (all but ``request`` and ``event`` are blocking and run
    in ``pool``)."""

    opts: dict[str, Any]
    grains: Callable[[], dict[str, Any]]
    pillar: Any  # the daemon's PillarSource
    request: Callable[[dict[str, Any], float | None], Awaitable[dict[str, Any] | None]]
    event: Callable[[str, str, dict[str, Any]], None]  # (jid, tag, data), on the loop
    refresh_pillar: Callable[[], bool]
    refresh_grains: Callable[[], bool]
    pool: concurrent.futures.Executor
    schedule: Callable[[str, dict[str, Any]], Any] | None = None  # schedule.* on the daemon's schedule (loop)
    beacons: Callable[[str, dict[str, Any]], Any] | None = None  # beacons.* on the daemon's beacons (loop)


class ProcessJobs:
    """Runs each job in its own process (loop)."""

    def __init__(self, links: DaemonLinks, registry: JobRegistry, launcher: Launcher) -> None:
        self.links = links
        self.registry = registry
        self.launcher = launcher
        most = config.limit(links.opts, "process_count_max")
        self.slots = asyncio.Semaphore(most) if most is not None else None
        self.proc_dir = Path(str(links.opts.get("cachedir") or "")) / "proc"

    def _launcher(self) -> Launcher:
        if not self.launcher.alive():
            log.error("the job launcher (pid %d) is gone; starting a new one", self.launcher.pid)
            self.launcher.stop(timeout=1.0)
            self.launcher = Launcher.start(self.links.opts)
        return self.launcher

    async def run(self, job: Job) -> JobResult:
        """Run ``job`` in a process of its own and return its result."""
        if self.slots is not None:
            if self.slots.locked():
                log.info("process_count_max reached; job %s waits for a running job to end", job.jid)
            await self.slots.acquire()
        running = RunningJob(job.jid, job.fun, time.time(), 0, record=job.proc_record(0))
        self.registry.add(running)
        try:
            return await self._run(job, running)
        finally:
            self.registry.remove(job.jid)
            try:
                (self.proc_dir / job.jid).unlink()
            except OSError:
                pass
            if self.slots is not None:
                self.slots.release()

    async def _start(self, job: Job) -> tuple[int, socket.socket]:
        """A process for ``job`` and the daemon's end of its channel. A launcher that dies while
        it takes the job (it may still look alive an instant after it was killed) is replaced and
        asked once more."""
        for attempt in (1, 2):
            ours, theirs = socket.socketpair()
            try:
                try:
                    return await self._launcher().launch(job.jid, theirs), ours
                finally:
                    theirs.close()
            except LauncherGone:
                ours.close()
                if attempt == 2:
                    raise
                log.warning("job %s: the job launcher stopped while taking it; asking a new one", job.jid)
            except OSError:
                ours.close()
                raise
        raise AssertionError("unreachable")

    async def _run(self, job: Job, running: RunningJob) -> JobResult:
        try:
            pid, ours = await self._start(job)
        except (LauncherGone, OSError) as exc:
            log.error("job %s: no process to run it: %s", job.jid, exc)
            return _error(job, "exception", f"ERROR: the job process could not start: {exc}")
        running.pid = running.record["pid"] = pid
        log.debug("job %s runs as pid %d", job.jid, pid)
        payload = await self._serve(job, ours)
        if isinstance(payload, dict):
            return _from_payload(job, payload)
        code = await self.launcher.exit_code(pid, EXIT_WAIT)
        if code is not None and code < 0:
            log.warning("job %s (%s, pid %d) was killed by signal %d", job.jid, job.fun, pid, -code)
            return _error(job, "killed", killed_message(job.jid, -code))
        status = "" if code is None else f" (exit status {code})"
        log.warning("job %s (%s, pid %d) ended without a return%s", job.jid, job.fun, pid, status)
        return _error(job, "exception", f"ERROR: job {job.jid} ended without a return{status}")

    async def _serve(self, job: Job, sock: socket.socket) -> dict[str, Any] | None:
        """Relay the job's channel until it closes; the job's ``return`` message, if it sent one."""
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        payload: dict[str, Any] | None = None
        tasks: set[asyncio.Task[None]] = set()
        try:
            writer.write(frame({"op": "job", "job": dataclasses.asdict(job), "grains": self.links.grains()}))
            while True:
                if payload is None:
                    message = await read_frame(reader)
                else:
                    try:
                        message = await asyncio.wait_for(read_frame(reader), RETURN_GRACE)
                    except asyncio.TimeoutError:
                        log.warning("job %s sent its return but its process did not end", job.jid)
                        break
                if message is None:
                    break
                op = message["op"]
                if op == "return":
                    result = message.get("result")
                    payload = result if isinstance(result, dict) else {"ret": result}
                elif op == "event":
                    if isinstance(message.get("tag"), str) and isinstance(message.get("data"), dict):
                        self.links.event(job.jid, message["tag"], message["data"])
                elif op == "modules_changed":  # a sync in the job: this process's listings are stale
                    modfolders.forget()
                elif op == "pillar_keep":
                    if isinstance(self.links.pillar, LocalPillar) and isinstance(message.get("pillar"), dict):
                        self.links.pillar.keep(message["pillar"])
                else:
                    task = asyncio.ensure_future(self._answer(writer, job, message))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
        except (BrinyError, OSError) as exc:
            log.warning("job %s: its channel failed: %s", job.jid, exc)
        finally:
            for task in tasks:
                task.cancel()
            writer.close()
        return payload

    async def _answer(self, writer: asyncio.StreamWriter, job: Job, message: dict[str, Any]) -> None:
        op, ident = message["op"], message.get("id")
        try:
            value = await self._value(op, message)
        except asyncio.CancelledError:
            raise
        except Exception:  # a failed relay answers None; the job goes on with its own error
            log.warning("job %s: its %r request failed", job.jid, op, exc_info=True)
            value = None
        try:
            writer.write(frame({"op": "reply", "id": ident, "value": value}))
        except (BrinyError, OSError, RuntimeError) as exc:
            log.debug("job %s: no reply to %r: %s", job.jid, op, exc)

    async def _value(self, op: str, message: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        links = self.links
        if op == "request":
            payload, timeout = message.get("payload"), message.get("timeout")
            if not isinstance(payload, dict):
                return None
            return await links.request(payload, positive(timeout, None))
        if op == "pillar":
            if isinstance(links.pillar, LocalPillar):
                return links.pillar.kept()
            return await loop.run_in_executor(links.pool, links.pillar.get, links.opts, links.grains(), None)
        if op == "refresh_pillar":
            return await loop.run_in_executor(links.pool, links.refresh_pillar)
        if op == "refresh_grains":
            return await loop.run_in_executor(links.pool, links.refresh_grains)
        if op == "schedule":
            action, args = message.get("action"), message.get("args")
            if links.schedule is None or not isinstance(action, str) or not isinstance(args, dict):
                return None
            return links.schedule(action, args)
        if op == "beacons":
            action, args = message.get("action"), message.get("args")
            if links.beacons is None or not isinstance(action, str) or not isinstance(args, dict):
                return None
            return links.beacons(action, args)
        if op == "jobs":
            return [
                {"jid": j.jid, "fun": j.fun, "started": j.started, "pid": j.pid, "record": j.record}
                for j in self.registry.snapshot().values()
            ]
        if op == "signal":
            sig = message.get("sig")
            if not isinstance(sig, int) or isinstance(sig, bool):
                return None
            return self.registry.signal(str(message.get("jid")), sig)
        log.warning("a job process asked for an unknown %r", op)
        return None

    def close(self) -> None:
        self.launcher.stop()


def _error(job: Job, kind: str, message: str) -> JobResult:
    return JobResult(job.jid, job.fun, job.fun_args(), message, EX_GENERIC, False, "nested", kind)


def _from_payload(job: Job, payload: dict[str, Any]) -> JobResult:
    retcode = payload.get("retcode")
    text = payload.get("exception")
    return JobResult(
        job.jid,
        job.fun,
        job.fun_args(),
        payload.get("ret"),
        retcode if isinstance(retcode, int) else EX_GENERIC,
        payload.get("success") is True,
        payload.get("out") if isinstance(payload.get("out"), str) else None,
        payload.get("error") if isinstance(payload.get("error"), str) else None,
        BrinyError(text) if isinstance(text, str) else None,
    )
