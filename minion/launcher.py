"""The minion's fork server: one small process that starts a process per job.

With ``multiprocessing: True`` (the default) every job runs in its own
process, as Salt's minion runs them: a job can be signalled
(``saltutil.kill_job``), a crashing module cannot take the daemon down, and
proc files show the job's own pid. Forking from the daemon itself is
unsafe (it runs ZeroMQ's I/O threads and an asyncio loop), so the daemon
starts this launcher once, at start-up, before it has any thread and after
it has imported its own modules (:func:`share_with_launcher`: one copy for
both processes, not one each): a plain ``os.fork`` whose child imports the
modules jobs need (the loader, the executor, the compiler, Jinja, YAML; then
``gc.freeze``) and waits. Each job
is then a fork of the launcher: it starts in about a millisecond with its
modules already imported, and shares their memory with the launcher. When
the daemon already has threads (a launcher restarted after it died, or a
test), the launcher is started as a fresh interpreter instead
(``python -m briny.minion.launcher FD``), which is safe anywhere.

Control protocol (``AF_UNIX`` ``SOCK_SEQPACKET``, one msgpack map per
message, ``docs/PROTOCOL.md``):

- daemon → launcher: ``{"op": "launch", "jid"}`` with the job channel's
  socket passed as ``SCM_RIGHTS``; ``{"op": "opts", "opts"}`` first, only to
  a launcher started as a fresh interpreter;
- launcher → daemon: ``{"op": "launched", "jid", "pid"}``, and
  ``{"op": "exit", "pid", "code"}`` when a job process ends (``code``:
  its exit status, or minus the signal that killed it).

A job process starts in a session of its own (``setsid``), so a signal for
it (and its process group) never reaches the daemon, the launcher or a
terminal's foreground group. Where it runs: the launcher is single-threaded
(a ``selectors`` loop); :class:`Launcher` is its client on the daemon's
asyncio loop.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from briny.common import wire
from briny.common.exceptions import BrinyError, LauncherGone

log = logging.getLogger(__name__)

# what a job needs, imported once in the launcher so each job starts with it
PRELOAD = (
    "yaml",
    "jinja2",
    "briny.common.loader",
    "briny.common.state.compiler",
    "briny.common.state.engine",
    "briny.common.state.render",
    "briny.common.state.jinja",
    "briny.common.state.state_call",
    "briny.common.pillar",
    "briny.minion.executor",
    "briny.minion.jobproc",
    "briny.minion.remotefiles",
)
# what the daemon itself runs, imported by the daemon before it forks the launcher: their pages
# are then shared by both processes (and every job) instead of imported twice
DAEMON_MODULES = (
    "zmq",
    "zmq.asyncio",
    "briny.common.transport",
    "briny.common.crypto",
    "briny.minion.agent",
    "briny.minion.localapi",
    "briny.minion.masters",
)
MAX_MESSAGE = 1 << 20
EX_SOFTWARE = 70


# -- the launcher process ---------------------------------------------------------------------


def _preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # a job imports it itself, or fails with its own message
            log.debug("launcher: %s not preloaded: %s", name, exc)
    import datetime

    datetime.datetime.strptime("20240101000000000000", "%Y%m%d%H%M%S%f")  # strptime's own imports
    gc.collect()
    gc.freeze()  # the imported heap stays shared with every job (no GC writes to its pages)


def share_with_launcher() -> None:
    """In the daemon, before :meth:`Launcher.start` forks: import :data:`DAEMON_MODULES` and move
    the heap built so far out of the collector's reach (``gc.freeze``), so the launcher and the
    daemon share those pages rather than each holding its own copy. Imports no thread."""
    import importlib

    for name in DAEMON_MODULES:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    try:
        sock.send(wire.pack(message))
    except OSError as exc:
        log.debug("launcher: the daemon did not take %s: %s", message.get("op"), exc)


def _start_job(ctl: socket.socket, opts: dict[str, Any], jid: str, chan_fd: int, closing: list[int]) -> int:
    pid = os.fork()
    if pid:
        os.close(chan_fd)
        return pid
    code = EX_SOFTWARE
    try:
        os.setsid()
        os.set_inheritable(chan_fd, False)  # commands the job starts do not hold its channel
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        ctl.close()
        for fd in closing:
            os.close(fd)
        from briny.minion.jobproc import main

        code = main(socket.socket(fileno=chan_fd), opts, jid)
    except BaseException:
        log.exception("job %s: its process failed", jid)
    finally:
        logging.shutdown()
        os._exit(code)
    return 0  # not reached


def serve(ctl: socket.socket, opts: dict[str, Any] | None) -> None:
    """The launcher's loop: start a job per ``launch``, report each job process's exit; until the
    daemon closes the control socket. ``opts`` None: the first message brings them."""
    for sig in (signal.SIGINT, signal.SIGHUP):  # the daemon decides when jobs stop
        signal.signal(sig, signal.SIG_IGN)
    rfd, wfd = os.pipe()
    os.set_blocking(rfd, False)
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(ctl, selectors.EVENT_READ, "ctl")
    sel.register(rfd, selectors.EVENT_READ, "sigchld")
    closing = [rfd, wfd, sel.fileno()] if hasattr(sel, "fileno") else [rfd, wfd]
    _preload()
    try:
        while True:
            for key, _ in sel.select():
                if key.data == "sigchld":
                    try:
                        while os.read(rfd, 512):
                            pass
                    except BlockingIOError:
                        pass
                    _reap(ctl)
                    continue
                try:
                    msg, fds, _, _ = socket.recv_fds(ctl, MAX_MESSAGE, 4)
                except OSError:
                    msg, fds = b"", []
                if not msg:
                    for fd in fds:
                        os.close(fd)
                    return  # the daemon is gone
                try:
                    request = wire.unpack(msg)
                except BrinyError:
                    request = None
                if not isinstance(request, dict):
                    for fd in fds:
                        os.close(fd)
                    continue
                if request.get("op") == "opts" and isinstance(request.get("opts"), dict):
                    opts = request["opts"]
                elif request.get("op") == "launch" and len(fds) == 1 and opts is not None:
                    jid = str(request.get("jid"))
                    pid = _start_job(ctl, opts, jid, fds[0], closing)
                    _send(ctl, {"op": "launched", "jid": jid, "pid": pid})
                else:
                    for fd in fds:
                        os.close(fd)
            _reap(ctl)
    finally:
        sel.close()


def _reap(ctl: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(ctl, {"op": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})


def main() -> None:
    """``python -m briny.minion.launcher FD``: a launcher in a fresh interpreter."""
    from briny.common.logsetup import setup_console

    setup_console(os.environ.get("BRINY_LAUNCHER_LOG", "warning"))
    ctl = socket.socket(fileno=int(sys.argv[1]))
    serve(ctl, None)


# -- the daemon's client ----------------------------------------------------------------------


class Launcher:
    """The daemon's handle on its launcher (methods but :meth:`start` and :meth:`stop` run on the
    asyncio loop)."""

    def __init__(self, ctl: socket.socket, pid: int, popen: subprocess.Popen[bytes] | None = None) -> None:
        self.ctl = ctl
        self.pid = pid
        self.popen = popen
        self._launching: dict[str, asyncio.Future[int]] = {}
        self._exits: dict[int, asyncio.Future[int]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    @classmethod
    def start(cls, opts: dict[str, Any]) -> "Launcher":
        """Start a launcher: forked when this process has no other thread, else a fresh
        interpreter (fork is unsafe next to threads)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if threading.active_count() == 1:
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    ours.close()
                    serve(theirs, opts)
                except BaseException:
                    log.exception("the job launcher failed")
                    code = EX_SOFTWARE
                finally:
                    logging.shutdown()
                    os._exit(code)
            theirs.close()
            log.debug("job launcher forked as pid %d", pid)
            return cls(ours, pid)
        popen = subprocess.Popen(
            [sys.executable, "-m", "briny.minion.launcher", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            close_fds=True,
        )
        theirs.close()
        ours.send(wire.pack({"op": "opts", "opts": opts}))
        log.debug("job launcher started as pid %d (a fresh interpreter)", popen.pid)
        return cls(ours, popen.pid, popen)

    def alive(self) -> bool:
        if self.closed:
            return False
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return pid == 0

    def _attach(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        self._loop = loop
        self.ctl.setblocking(False)
        loop.add_reader(self.ctl.fileno(), self._readable)

    def _readable(self) -> None:
        try:
            msg = self.ctl.recv(MAX_MESSAGE)
        except BlockingIOError:
            return
        except OSError:
            msg = b""
        if not msg:
            self._gone()
            return
        try:
            data = wire.unpack(msg)
        except BrinyError:
            log.warning("the job launcher sent a message that does not parse")
            return
        if not isinstance(data, dict):
            return
        if data.get("op") == "launched":
            fut = self._launching.pop(str(data.get("jid")), None)
            if fut is not None and not fut.done():
                fut.set_result(int(data.get("pid") or 0))
        elif data.get("op") == "exit":
            self._exit_future(int(data.get("pid") or 0)).set_result(int(data.get("code") or 0))

    def _exit_future(self, pid: int) -> asyncio.Future[int]:
        fut = self._exits.get(pid)
        if fut is None or fut.done():
            assert self._loop is not None
            fut = self._exits[pid] = self._loop.create_future()
        return fut

    def _gone(self) -> None:
        if self._loop is not None and not self.closed:
            self._loop.remove_reader(self.ctl.fileno())
        self.closed = True
        for fut in list(self._launching.values()):
            if not fut.done():
                fut.set_exception(LauncherGone("the job launcher stopped"))
        self._launching.clear()

    async def launch(self, jid: str, chan: socket.socket) -> int:
        """Start a job process with ``chan`` as its channel; its pid."""
        self._attach()
        if self.closed:
            raise LauncherGone("the job launcher is not running")
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._launching[jid] = fut
        try:
            socket.send_fds(self.ctl, [wire.pack({"op": "launch", "jid": jid})], [chan.fileno()])
        except OSError as exc:
            self._launching.pop(jid, None)
            self._gone()
            raise LauncherGone(f"the job launcher did not take job {jid}: {exc}") from None
        pid = await fut
        self._exits.setdefault(pid, asyncio.get_running_loop().create_future())
        return pid

    async def exit_code(self, pid: int, timeout: float) -> int | None:
        """The exit status of job process ``pid`` (minus the signal that killed it), or None when
        the launcher does not report it in ``timeout`` s."""
        fut = self._exits.get(pid)
        if fut is None:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except asyncio.TimeoutError:
            return None
        finally:
            if fut.done():
                self._exits.pop(pid, None)

    def stop(self, timeout: float = 5.0) -> None:
        """Close the control socket (the launcher exits; running jobs are the daemon's business)
        and reap it."""
        if self._loop is not None and not self.closed:
            try:
                self._loop.remove_reader(self.ctl.fileno())
            except (ValueError, RuntimeError):
                pass
        self.closed = True
        self.ctl.close()
        if self.popen is not None:
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if pid:
                return
            if time.monotonic() > deadline:
                log.warning("the job launcher (pid %d) did not stop; killing it", self.pid)
                os.kill(self.pid, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.01)


if __name__ == "__main__":
    main()
