"""What the throwaway database servers of the tests share (``tests/pgserver.py``,
``tests/mariadbserver.py``): the unprivileged user a server runs as, a free port, starting the
server process with its log and waiting until it answers, stopping it by pid.

A server dies with the process that started it, even one killed with SIGKILL (a CI timeout): it
is started directly (``postgres``, ``mariadbd``: no launcher that forks it away), under its
user already (a server that switches user itself loses the signal), with Linux's parent-death
signal (:func:`briny.common.daemonize.dies_with_this_thread`). That signal comes when the
*thread* that started it exits, so every server is started from one thread kept for the life
of the process.

Standard library and :mod:`briny.common.daemonize` only.
"""

from __future__ import annotations

import concurrent.futures
import os
import pwd
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from briny.common.daemonize import dies_with_this_thread

# the thread every server is started from: it lives as long as the process (see the module's doc)
_STARTER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-server-starter")


class ServerUnavailable(Exception):
    """A server cannot be started here (not installed, no unprivileged user): the tests skip."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def owner(system_user: str) -> pwd.struct_passwd:
    """Who runs the server: ``system_user`` (the package's own) when the suite runs as root, else
    the current user."""
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid())
    try:
        return pwd.getpwnam(system_user)
    except KeyError:
        raise ServerUnavailable(f"running as root and there is no {system_user!r} user to run the server as") from None


def as_user(uid: int, gid: int) -> dict[str, Any]:
    """The :class:`subprocess.Popen` arguments that run a command as ``uid``/``gid`` (and none of
    root's groups) when the suite runs as root; none otherwise (it runs as the current user)."""
    if os.geteuid() == 0 and uid != 0:
        return {"user": uid, "group": gid, "extra_groups": []}
    return {}


def launch(
    argv: list[str],
    root: Path,
    answers: Callable[[], bool],
    timeout: float,
    death_signal: int = signal.SIGTERM,
    **popen: Any,
) -> subprocess.Popen[bytes] | None:
    """Start ``argv`` in ``root`` (its output to ``root/server.log``, a session of its own; it gets
    ``death_signal`` when this process dies) and poll ``answers()`` until it is true: the process;
    None when the process exited first (most likely its port was taken meanwhile: the caller
    retries on another). The process is killed and :class:`ServerUnavailable` raised (with the
    log's tail) when it does not answer within ``timeout`` seconds."""

    def start() -> subprocess.Popen[bytes]:
        with open(root / "server.log", "ab") as log:  # the child keeps its own copy
            return subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=root,
                start_new_session=True,
                preexec_fn=dies_with_this_thread(death_signal),  # in the child: one prctl call, no lock taken
                **popen,
            )

    proc = _STARTER.submit(start).result()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None
        if answers():
            return proc
        time.sleep(0.05)  # polling a starting server: nothing to wait on but its socket
    stop_process(proc, signal.SIGKILL, 10)
    raise ServerUnavailable(f"{Path(argv[0]).name} did not answer within {timeout:g} s: {log_tail(root)}")


def log_tail(root: Path) -> str:
    """The end of the server's log (for error messages)."""
    try:
        return (root / "server.log").read_text(errors="replace")[-1500:]
    except OSError:
        return ""


def stop_process(proc: subprocess.Popen[bytes] | None, sig: int, timeout: float) -> None:
    """Send ``sig`` to a server started by a test, wait ``timeout``, then SIGKILL its process group."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
