"""Processes on this host: by command line (``service.status`` with ``sig``), and a process's
descendants (``saltutil.signal_job`` stops a job with everything it started).

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


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process on this host (``/proc/<pid>/stat``)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name (2nd field) is in parentheses and may hold spaces: read after the last ')'
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            parents[int(name)] = int(fields[1])
    return parents


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (children first, then theirs), whatever their session or
    process group (``cmd.run`` starts its commands in a session of their own)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in sorted(children.get(todo.pop(0), [])):
            if child not in found and child != pid:
                found.append(child)
                todo.append(child)
    return found


def signal_tree(pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid`` and to every process it started, as Salt's ``saltutil.signal_job``
    does: the tree is read first, then ``pid`` is signalled first (so a job cannot react to its
    children's death), then its descendants. ProcessLookupError when ``pid`` is gone."""
    tree = descendants(pid)
    os.kill(pid, sig)
    for child in tree:
        try:
            os.kill(child, sig)
        except (ProcessLookupError, PermissionError):
            continue
