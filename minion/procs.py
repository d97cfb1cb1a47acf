"""Looking for processes on this host by command line (``service.status`` with ``sig``).

Runs in execution modules on the managed host. Reads ``/proc`` directly:
no ``ps`` subprocess.
"""

from __future__ import annotations

import os
import re


def sig_running(sig: str) -> bool:
    """Whether a process other than this one has a command line matching ``sig``
    (a regular expression, or the literal text when it is not a valid one)."""
    try:
        pattern = re.compile(str(sig))
    except re.error:
        pattern = re.compile(re.escape(str(sig)))
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        if cmdline and pattern.search(cmdline):
            return True
    return False
