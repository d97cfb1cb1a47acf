"""The proc files of a process's jobs (``cachedir/proc/<jid>``), written only for jobs that last.

Salt keeps a proc file for every job while it runs, so ``saltutil.running``,
``saltutil.find_job`` and ``state.running`` in *another* process (``briny-call
--local``, a second daemon) see it. Writing and removing one costs two file
creations, a rename and an unlink a job, most of a ``test.ping``'s own time. The
minion daemon answers for its own jobs from its job registry
(:mod:`briny.minion.jobregistry`, which carries each job's proc record), so here
a job's file is written only once the job has run ``proc_file_delay`` seconds
(default :data:`DEFAULT_DELAY`), by one timer thread of the process, and removed
at its end only when it was written. ``state.*`` jobs (whose conflicts other
processes check before running states) and a delay of 0 write the file at once,
as Salt does.

Thread-safe. After a fork the child starts with no pending files and its own
timer thread (a job process, ``multiprocessing: True``, runs one job).
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from briny.common.atomicfile import write_atomic
from briny.common.numbers import non_negative

log = logging.getLogger(__name__)

DEFAULT_DELAY = 1.0  # seconds a job runs before its proc file is written (``proc_file_delay``)
AT_ONCE = ("state.",)  # functions whose proc file is written when they start (Salt's conflict checks)


def proc_file_delay(opts: dict[str, Any]) -> float:
    """``proc_file_delay`` from the minion's opts: seconds (0: every file at once, as Salt);
    a value that is not a number at least 0 is logged and the default used."""
    raw = opts.get("proc_file_delay", DEFAULT_DELAY)
    value = non_negative(raw, None)
    if value is None:
        log.warning("proc_file_delay must be a number of seconds, at least 0 (not %r): using %s", raw, DEFAULT_DELAY)
        return DEFAULT_DELAY
    return value


def write_record(path: Path, record: dict[str, Any]) -> bool:
    """Write one proc file (its folder made when missing); False (logged) when the disk refuses."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(path, json.dumps(record, default=str), 0o600)
    except OSError as exc:
        log.debug("no proc file for job %s (%s): %s", path.name, path, exc)
        return False
    return True


class _Timer:
    """The process's one thread writing the proc files that came due (a heap of due times;
    a job that ended is dropped from ``pending`` and skipped when its time comes)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.heap: list[tuple[float, int, Path]] = []
        self.pending: dict[Path, dict[str, Any]] = {}
        self.written: set[Path] = set()
        self.thread: threading.Thread | None = None
        self.seq = 0

    def schedule(self, path: Path, record: dict[str, Any], delay: float) -> None:
        with self.cond:
            self.seq += 1
            self.pending[path] = record
            heapq.heappush(self.heap, (time.monotonic() + delay, self.seq, path))
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="briny-procfiles", daemon=True)
                self.thread.start()
            elif self.heap[0][2] == path:
                self.cond.notify()

    def written_now(self, path: Path) -> None:
        with self.cond:
            self.written.add(path)

    def finish(self, path: Path) -> None:
        """The job of ``path`` ended: forget it, and remove its file if one was written (under the
        lock, so a file being written now is removed after it)."""
        with self.cond:
            self.pending.pop(path, None)
            if path not in self.written:
                return
            self.written.discard(path)
            try:
                path.unlink()
            except OSError:
                pass

    def is_written(self, path: Path) -> bool:
        with self.cond:
            return path in self.written

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.heap:
                    self.cond.wait()
                due, _, path = self.heap[0]
                wait = due - time.monotonic()
                if wait > 0:
                    self.cond.wait(wait)
                    continue
                heapq.heappop(self.heap)
                record = self.pending.pop(path, None)
                if record is not None and write_record(path, record):  # under the lock: see finish
                    self.written.add(path)


_TIMER = _Timer()


def _after_fork() -> None:
    global _TIMER
    _TIMER = _Timer()


os.register_at_fork(after_in_child=_after_fork)


class ProcFiles:
    """The proc files of the jobs one executor runs, in ``proc_dir``, written after ``delay``."""

    def __init__(self, proc_dir: Path, delay: float = DEFAULT_DELAY) -> None:
        self.proc_dir = proc_dir
        self.delay = delay

    def begin(self, jid: str, fun: str, record: dict[str, Any]) -> None:
        """Job ``jid`` starts: its file is written now (a delay of 0, a ``state.*`` job) or once it
        has run ``delay`` seconds."""
        path = self.proc_dir / jid
        if self.delay <= 0 or fun.startswith(AT_ONCE):
            if write_record(path, record):
                _TIMER.written_now(path)
            return
        _TIMER.schedule(path, record, self.delay)

    def end(self, jid: str) -> None:
        """Job ``jid`` ended: its file is removed if it was written, its pending write dropped."""
        _TIMER.finish(self.proc_dir / jid)

    def written(self, jid: str) -> bool:
        """Whether job ``jid`` has its file now."""
        return _TIMER.is_written(self.proc_dir / jid)
