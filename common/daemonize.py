"""Process plumbing shared by the daemons: pidfiles, detaching with a readiness report, and
child processes that die with the process that started them.

Runs at daemon start-up (``briny-master``, ``briny-minion``), before the
event loop. :func:`daemonize` double-forks; the command the operator ran
waits on a pipe until the daemon reports with :func:`report` (``"ok"``
once it serves, or the reason it could not), so ``briny-master -d`` returns
only when the master is up, and a failure is printed on the terminal rather
than lost in a log.

:func:`die_with` (in a forked child, or through :func:`dies_with_this_thread` as a
``preexec_fn``) asks Linux for a signal when the parent goes (``PR_SET_PDEATHSIG``), so a
parent killed with SIGKILL leaves no children behind.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import sys
from collections.abc import Callable

from .atomicfile import write_atomic

log = logging.getLogger(__name__)


def running_pid(path: str) -> int | None:
    """The live process a pidfile names (not this one), or None."""
    try:
        with open(path, encoding="ascii") as fh:
            pid = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        return None
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def write_pidfile(path: str) -> None:
    """Write this process's pid atomically (OSError when the folder is not writable)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_atomic(path, f"{os.getpid()}\n", 0o644)


def with_pidfile(name: str, path: str, ready_fd: int | None, main: Callable[[], int]) -> int:
    """Run ``main`` with this process's pid recorded in ``path`` (removed after, if still ours); a
    pidfile that cannot be written is logged, told to the waiting parent (``ready_fd``) and gives 1."""
    try:
        write_pidfile(path)
    except OSError as exc:
        log.error("cannot write the pidfile %s: %s", path, exc)
        report(ready_fd, f"{name}: cannot write the pidfile {path}: {exc.strerror}\n")
        return 1
    try:
        return main()
    finally:
        remove_pidfile(path)


def remove_pidfile(path: str) -> None:
    """Remove the pidfile if it still names this process."""
    with contextlib.suppress(OSError, ValueError):
        with open(path, encoding="ascii") as fh:
            if int(fh.read().strip() or 0) != os.getpid():
                return
        os.unlink(path)


def daemonize(name: str) -> int:
    """Double fork. Returns, in the daemon, the write end of a pipe to :func:`report` on.

    The original process waits on the pipe and exits: 0 when the daemon
    wrote ``ok``, 1 (printing what it wrote) otherwise.
    """
    read_fd, write_fd = os.pipe()
    if os.fork() > 0:
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as fh:
            status = fh.read().decode("utf-8", "replace")
        if status == "ok":
            os._exit(0)
        sys.stderr.write(status or f"{name}: the daemon exited before it was ready; see the log file\n")
        sys.stderr.flush()
        os._exit(1)
    os.close(read_fd)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    os.chdir("/")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    return write_fd


def report(fd: int | None, text: str) -> None:
    """Tell the waiting parent how start-up went (once; later calls do nothing)."""
    if fd is None:
        return
    with contextlib.suppress(OSError):
        os.write(fd, text.encode("utf-8"))
        os.close(fd)


PR_SET_PDEATHSIG = 1  # prctl(2)


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (None where there is none: not Linux). Looked up once, in the parent: a
    forked child of a threaded process must not run the dynamic loader. ``ctypes`` is imported
    only here: an idle minion daemon does not load it."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with(parent: int, sig: int = signal.SIGTERM) -> None:
    """In a child process, first thing after the fork: ``sig`` comes to it when the *thread* that
    forked it exits (Linux ``PR_SET_PDEATHSIG``; cleared again when its user or group changes or it
    execs a set-user-ID program, so change them before). Exits at once when ``parent`` is gone
    already. Where there is no ``prctl`` it does nothing: the parent's own stop still reaches it."""
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:
        os._exit(0)


def dies_with_this_thread(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for :class:`subprocess.Popen` (which runs it after switching ``user`` and
    ``group``): the command gets ``sig`` when the calling thread exits, or the process with it. So
    call Popen from a thread that lives as long as the command should (the main thread, or one
    kept for that)."""
    _prctl()
    return functools.partial(die_with, os.getpid(), sig)
