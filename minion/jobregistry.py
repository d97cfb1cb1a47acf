"""The minion daemon's job registry: which jobs run, and how ``saltutil`` signals them.

Runs in the daemon (its loop and worker threads; thread-safe). Every job
the daemon runs is registered for its lifetime, so ``saltutil.running`` can
tell a live job from a stale proc file, ``state.running`` can decide which
of two state runs started first, and ``saltutil.signal_job`` reaches the
job (``__job__.jobs``: directly for a thread job, through the job channel
for a job process).

- a **job process** (``multiprocessing: True``) gets the signal, and so
  does every process it started (:func:`briny.minion.host.procs.signal_tree`);
- a **thread job** (``multiprocessing: False``) cannot be signalled: SIGKILL,
  SIGTERM and SIGINT raise :class:`JobKilled` in its thread the next time it
  runs Python code (a blocking system call is not interrupted); other
  signals are refused with a message.
"""

from __future__ import annotations

import os
import signal
import threading

from briny.common.exceptions import JobKilled
from briny.common.jobcontext import RunningJob


class JobRegistry:
    """Jobs running in this process's threads (thread-safe; the minion shares one with every job
    as ``__job__.jobs`` so ``saltutil`` can tell them apart and stop them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, RunningJob] = {}

    def add(self, job: RunningJob) -> None:
        with self._lock:
            self._jobs[job.jid] = job

    def remove(self, jid: str) -> None:
        """Forget a finished job; a stop signal that has not fired yet is dropped (a thread job
        calls this from its own thread: the signal fires here, and no later one can come)."""
        with self._lock:
            job = self._jobs.pop(jid, None)
        if job is not None and job.signalled and job.thread_id is not None:
            _drop_stop(job.thread_id)

    def get(self, jid: str) -> RunningJob | None:
        with self._lock:
            return self._jobs.get(jid)

    def snapshot(self) -> dict[str, RunningJob]:
        with self._lock:
            return dict(self._jobs)

    def jids(self) -> list[str]:
        with self._lock:
            return sorted(self._jobs)

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)

    def signal(self, jid: str, sig: int) -> str | None:
        """Deliver ``sig`` to job ``jid``; Salt's answer, or None when ``jid`` is not here.

        A job process gets ``sig``, and so does every process it started (``cmd.run``'s
        commands). A thread job (``multiprocessing: False``) can only be stopped:
        SIGKILL/SIGTERM/SIGINT raise JobKilled in its thread when it next runs Python code; 0
        only checks."""
        with self._lock:
            job = self._jobs.get(jid)
            if job is None:
                return None
            if job.thread_id is None:
                return _signal_process(job, sig)
            if sig == 0:
                return f"Job {jid} is running in a thread of the minion (pid {os.getpid()})"
            if sig not in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
                return (
                    f"Signal {sig} cannot be delivered to job {jid}: it runs in a thread of the "
                    f"minion; use saltutil.kill_job or saltutil.term_job"
                )
            if job.thread_id is None:
                return None
            job.signalled = sig
            done = _async_raise(job.thread_id, JobKilled)
        if done != 1:
            return f"Job {jid} was not running and job data has been cleaned up"
        return f"Signal {int(sig)} sent to job {jid} at pid {os.getpid()}"

    def stop_all(self, sig: int | None = None) -> list[str]:
        """Ask every running job to stop (daemon shutdown after the grace period): SIGTERM unless
        ``sig`` says otherwise."""
        return [jid for jid in self.jids() if self.signal(jid, signal.SIGTERM if sig is None else sig)]


def _signal_process(job: RunningJob, sig: int) -> str:
    from briny.minion.host.procs import signal_tree

    if job.pid <= 0:
        return f"Job {job.jid} is starting; it has no pid yet"
    try:
        signal_tree(job.pid, sig)
    except ProcessLookupError:
        return f"Job {job.jid} was not running and job data has been cleaned up"
    if sig:
        job.signalled = sig
    return f"Signal {int(sig)} sent to job {job.jid} at pid {job.pid}"


def killed_message(jid: str, sig: int) -> str:
    """The return of a job a signal stopped."""
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    return f"ERROR: job {jid} was killed by signal {int(sig)} ({name})"


def _drop_stop(thread_id: int) -> None:
    """Drop a JobKilled still pending for ``thread_id``.

    In its own thread, let it fire and catch it: withdrawing it instead
    (``PyThreadState_SetAsyncExc(id, NULL)``) leaves CPython 3.11's "asynchronous exception"
    flag set for the whole process, and from then on any trace function (coverage, a
    debugger, a profiler) livelocks every thread."""
    if thread_id != threading.get_ident():
        _async_raise(thread_id, None)
        return
    try:
        _checkpoint()
    except JobKilled:
        pass


def _checkpoint() -> None:
    """Nothing: calling a Python function is where a pending asynchronous exception fires."""


def _async_raise(thread_id: int, exc: type[BaseException] | None) -> int:
    """Raise ``exc`` in another thread when it next runs Python code (None withdraws it)."""
    import ctypes  # only when a job is stopped

    obj = ctypes.py_object(exc) if exc is not None else None
    return int(ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), obj))
