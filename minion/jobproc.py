"""A job process's side (``multiprocessing: True``): run one job, reaching everything through the
daemon.

Runs in a process the launcher forked for one job (:mod:`briny.minion.launcher`),
single-threaded unless a module starts threads. :func:`main` reads the job
(and the daemon's current grains) from its channel
(:mod:`briny.minion.jobchannel`), runs it with the same
:class:`~briny.minion.executor.Executor` as a thread job, and sends back its
return. The job's context (``__job__``) is the channel's implementation of
the interface a thread job gets as plain callables: ``master`` relays a
request to the master through the daemon, ``fire_event`` sends an event the
daemon forwards, ``jobs`` reads and signals the daemon's job registry,
``refresh_pillar``/``refresh_grains`` ask the daemon; pillar comes from the
daemon (which keeps it, as for thread jobs). The process never opens a
connection to the master.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

from briny.common.exceptions import BrinyError
from briny.common.jobcontext import RunningJob
from briny.minion.executor import Executor, Job, JobResult
from briny.minion.jobchannel import JobChannel
from briny.minion.pillar import ChannelPillar

log = logging.getLogger(__name__)


class ChannelMaster:
    """``__job__.master``: one request to the master, relayed by the daemon."""

    def __init__(self, chan: JobChannel) -> None:
        self.chan = chan

    def __call__(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        reply = self.chan.call("request", payload=payload, timeout=timeout)
        return reply if isinstance(reply, dict) else None


class ChannelJobs:
    """``__job__.jobs``: the daemon's job registry, read and signalled through the channel (the
    daemon registers the job itself, so ``add``/``remove`` do nothing here)."""

    def __init__(self, chan: JobChannel) -> None:
        self.chan = chan

    def snapshot(self) -> dict[str, RunningJob]:
        jobs = self.chan.call("jobs")
        return {
            str(j["jid"]): RunningJob(
                str(j["jid"]),
                str(j["fun"]),
                float(j["started"]),
                int(j["pid"]),
                record=j["record"] if isinstance(j.get("record"), dict) else {},
            )
            for j in (jobs or [])
            if isinstance(j, dict)
        }

    def signal(self, jid: str, sig: int) -> str | None:
        answer = self.chan.call("signal", jid=str(jid), sig=int(sig))
        return answer if isinstance(answer, str) else None

    def add(self, job: RunningJob) -> None:
        pass

    def remove(self, jid: str) -> None:
        pass


def result_message(result: JobResult) -> dict[str, Any]:
    """A job's result as the ``return`` message carries it."""
    exc = result.exception
    return {
        "ret": result.ret,
        "retcode": result.retcode,
        "success": result.success,
        "out": result.out,
        "error": result.error,
        "exception": str(exc) if isinstance(exc, BrinyError) else None,
    }


def main(sock: socket.socket, opts: dict[str, Any], jid: str) -> int:
    """Run the job the daemon sends on ``sock``; the process's exit status."""
    chan = JobChannel(sock)
    try:
        spec = chan.recv()
        body = spec.get("job")
        if spec.get("op") != "job" or not isinstance(body, dict) or body.get("jid") != jid:
            log.error("job process for %s: the daemon sent no usable job", jid)
            return 2
        job = Job(**body)
        grains = spec.get("grains")
        if not isinstance(grains, dict):
            grains = {}
        ex = Executor(
            opts,
            lambda: grains,
            ChannelPillar(chan, opts.get("file_client") == "local"),
            ChannelJobs(chan),
            master=ChannelMaster(chan),
            refresh_pillar=lambda: bool(chan.call("refresh_pillar")),
            refresh_grains=lambda: bool(chan.call("refresh_grains")),
            modules_changed=lambda: chan.send("modules_changed"),
            schedule=lambda action, args: chan.call("schedule", action=action, args=args),
            beacons=lambda action, args: chan.call("beacons", action=action, args=args),
        )
        result = ex.run(job, fire_event=lambda tag, data: chan.send("event", tag=tag, data=data))
        chan.send("return", result=result_message(result))
        return 0
    finally:
        chan.close()
