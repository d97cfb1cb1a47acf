"""common/daemonize.py's parent-death signal: a child started with :func:`dies_with_this_thread`
gets the signal when the thread that started it exits, and :func:`die_with` ends a child whose
parent is already gone. (The pidfile and detaching parts run in the daemons' e2e tests.)"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import threading

import pytest

from briny.common.daemonize import die_with, dies_with_this_thread

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="Linux only (PR_SET_PDEATHSIG)")


def _started_from_a_thread(sig: int) -> subprocess.Popen[bytes]:
    """`sleep 600` started from a thread that exits right after (the process lives on otherwise)."""
    box: list[subprocess.Popen[bytes]] = []
    thread = threading.Thread(
        target=lambda: box.append(subprocess.Popen(["sleep", "600"], preexec_fn=dies_with_this_thread(sig)))
    )
    thread.start()
    thread.join(30)
    assert box, "the thread did not start the process"
    return box[0]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_child_gets_the_signal_when_its_thread_exits(sig: int) -> None:
    proc = _started_from_a_thread(sig)
    try:
        assert proc.wait(30) == -sig
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_child_of_a_parent_already_gone_exits_before_running_anything() -> None:
    # a parent pid that is not the child's: as if the parent died between the fork and the prctl
    proc = subprocess.Popen(["sh", "-c", "exit 3"], preexec_fn=functools.partial(die_with, os.getpid() + 1_000_000))
    assert proc.wait(30) == 0
