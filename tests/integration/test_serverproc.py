"""The throwaway database servers of the tests (tests/serverproc.py) die with the process that
started them: a test run killed with SIGKILL (a CI timeout) leaves no server behind.

- a PostgreSQL and a MariaDB server started by a Python process that is then SIGKILLed are gone
  (the server and every process it had started) soon after, with nothing sent to them by the test;
- a server started from a thread that has exited still serves (the parent-death signal follows
  the *thread* that started a process: tests/serverproc.py starts every server from one thread
  that lives as long as the process).

Each test stops what it started by pid when it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from briny.minion.host.procs import descendants
from tests.serverproc import launch, stop_process
from tests.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]

# started as `python -c CHILD MODULE CLASS`: starts the server, says its pid and folder, then
# waits for stdin to close (never: the test kills it)
CHILD = """
import importlib, json, sys
server = getattr(importlib.import_module(sys.argv[1]), sys.argv[2]).start()
print(json.dumps({"pid": server.proc.pid, "root": str(server.root)}), flush=True)
sys.stdin.read()
"""

# started as `python -c ECHO SOCKET`: sends back what each connection sends, until killed
ECHO = """
import socket, sys
srv = socket.socket(socket.AF_UNIX)
srv.bind(sys.argv[1])
srv.listen()
while True:
    conn, _ = srv.accept()
    with conn:
        conn.sendall(conn.recv(64))
"""


def _start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), None when it is gone or a zombie: with the
    pid, who a process is (a pid may be reused)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # after the command name, which may hold spaces
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


@contextlib.contextmanager
def _killed_by_pid(tree: dict[int, int | None]) -> Iterator[None]:
    """On the way out, SIGKILL every process of ``tree`` (pid -> start time) still running."""
    try:
        yield
    finally:
        for pid, started in tree.items():
            if started is not None and _start_time(pid) == started:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.mark.host
@pytest.mark.parametrize(
    ("module", "cls"), [("tests.pgserver", "PgServer"), ("tests.mariadbserver", "MariaDBServer")], ids=["pg", "mariadb"]
)
def test_server_dies_with_the_process_that_started_it(module: str, cls: str, tmp_path: Path) -> None:
    errors = tmp_path / "child.err"
    with open(errors, "wb") as err:
        starter = subprocess.Popen(
            [sys.executable, "-c", CHILD, module, cls],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
        )
    tree: dict[int, int | None] = {}
    root: Path | None = None
    try:
        with _killed_by_pid(tree):
            assert starter.stdout is not None
            ready, _, _ = select.select([starter.stdout], [], [], 180)
            line = starter.stdout.readline() if ready else b""
            if not line:
                stop_process(starter, signal.SIGKILL, 10)
                why = errors.read_text(errors="replace")
                if "ServerUnavailable" in why:
                    pytest.skip(f"no throwaway server here: {why[-500:]}")
                pytest.fail(f"the starting process said nothing within 180 s: {why[-1500:]}")
            started = json.loads(line)
            server, root = started["pid"], Path(started["root"])
            tree.update((pid, _start_time(pid)) for pid in [server, *descendants(server)])
            assert tree[server] is not None, "the server was not running when its starter said it was"

            starter.kill()
            starter.wait(10)

            def running() -> list[int]:
                return [pid for pid, t in tree.items() if t is not None and _start_time(pid) == t]

            wait_until(
                lambda: not running(),
                60,
                f"the server's processes {sorted(tree)} to end after their starter was killed",
                detail=lambda: f"still running: {running()}",
            )
    finally:
        stop_process(starter, signal.SIGKILL, 10)
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


def _echo(path: Path) -> bool:
    """Whether the echo process answers on ``path`` (its code ran after the call)."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(str(path))
            s.sendall(b"ping")
            return s.recv(64) == b"ping"
    except OSError:
        return False


def test_server_started_from_a_thread_outlives_the_thread(tmp_path: Path) -> None:
    path = tmp_path / "echo.sock"
    started: dict[str, object] = {}

    def start() -> None:
        started["tid"] = threading.get_native_id()
        started["proc"] = launch([sys.executable, "-c", ECHO, str(path)], tmp_path, lambda: _echo(path), 30)

    thread = threading.Thread(target=start)
    thread.start()
    thread.join(60)
    proc = started.get("proc")
    assert isinstance(proc, subprocess.Popen), f"the echo process did not start: {started}"
    try:
        # once the thread is gone from /proc, its exit is complete: a parent-death signal tied
        # to it has been sent, and the fatal SIGTERM would stop the echo before it answered
        wait_until(lambda: not os.path.exists(f"/proc/self/task/{started['tid']}"), 30, "the starting thread to end")
        assert _echo(path), f"the process died with the thread that started it: {proc.poll()}"
        assert proc.poll() is None
    finally:
        stop_process(proc, signal.SIGKILL, 10)
