"""Run a function as another user, for the tests of who may reach a daemon's local sockets.

The venv's interpreter may live where another user cannot execute it (under
``/root``), so this forks instead of starting a process: the child drops to
``uid``/``gid``, calls the function, sends back its result (``repr``) through
a pipe and exits at once. Needs root; bounded in time; the child is reaped
(and killed by pid on a timeout).
"""

from __future__ import annotations

import os
import select
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any

NOBODY = 65534


def run_as(uid: int, fn: Callable[..., Any], *args: Any, timeout: float = 30.0) -> str:
    """``repr(fn(*args))`` computed by a forked child running as ``uid`` (and that gid)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the test runner
        code = 0
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            text = repr(fn(*args))
        except BaseException:  # noqa: BLE001 - the child reports anything, then exits
            text, code = "EXCEPTION " + traceback.format_exc(), 1
        try:
            os.write(write_fd, text.encode("utf-8", "replace"))
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"the child running as uid {uid} did not finish in {timeout:g} s")
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    text = b"".join(chunks).decode("utf-8", "replace")
    if text.startswith("EXCEPTION "):
        raise AssertionError(f"the child running as uid {uid} failed:\n{text[10:]}")
    return text
