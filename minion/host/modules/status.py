"""Execution module ``status``: what a Linux host reports of itself (Salt 3007's answers).

Runs on the managed host; every function reads that host (``/proc``,
``statvfs``, ``who``/``w``/``ps``/``nproc`` through ``cmd.run``), so none of
them is pure: a master-side compile that calls one lets the minion compile
for itself (``master/pillar.py`` ``PURE_FUNCTIONS``).

Linux is what briny manages: on another kernel (the ``kernel`` grain) the
per-platform functions return Salt's ``"This method is unsupported on the
current operating system!"``. Values are Salt's: numbers read from
``/proc`` become ``int`` (digits only) or ``float`` when they parse,
``meminfo`` keeps its values as text, ``uptime`` is a dict with
``seconds``/``since_iso``/``since_t``/``days``/``time`` (``H:M``, not
zero-padded) and ``users`` when ``who`` exists, ``time`` formats the local
time (``format``, default ``"%A, %d. %B %Y %I:%M%p"``).

``status.master`` / ``ping_master`` / ``proxy_reconnect`` (Salt's checks of
the minion's master connection) are not provided: ``test.ping`` through the
master and the minion's own heartbeat answer that question in briny.
"""

from __future__ import annotations

import datetime
import fnmatch
import logging
import os
import re
import shutil
import time as _time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __salt__

log = logging.getLogger(__name__)

__virtualname__ = "status"
__func_alias__ = {"time_": "time"}

UNSUPPORTED = "This method is unsupported on the current operating system!"


def _kernel() -> str:
    return str(__grains__.get("kernel") or "Linux")


def _linux(fn: Callable[[], Any]) -> Any:
    return fn() if _kernel() == "Linux" else UNSUPPORTED


def _number(text: str) -> Any:
    """An int for digits only, else a float when it parses, else the text."""
    if text.isdigit():
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        log.debug("status: cannot read %s: %s", path, exc)
        return None


def _lines(path: str) -> list[list[str]]:
    text = _read(path)
    return [line.split() for line in (text or "").splitlines() if line.strip()]


def _run(cmd: str, **kwargs: Any) -> str:
    return str(__salt__["cmd.run"](cmd, **kwargs))


def procs(**kwargs: Any) -> dict[str, dict[str, str]]:
    """``{pid: {"user", "cmd"}}`` of every process, from the ``ps`` grain's command."""
    lines = _run(__grains__.get("ps") or "ps -efHww", python_shell=True).splitlines()
    if not lines:
        return {}
    head = lines.pop(0).split()
    user = head.index("USER") if "USER" in head else head.index("UID") if "UID" in head else 0
    pid_at = head.index("PID") if "PID" in head else 0
    cmd = head.index("COMMAND") if "COMMAND" in head else head.index("CMD") if "CMD" in head else 0
    out: dict[str, dict[str, str]] = {}
    for line in lines:
        parts = line.split()
        if parts:
            out[parts[pid_at]] = {"user": parts[user], "cmd": " ".join(parts[cmd:])}
    return out


def custom(**kwargs: Any) -> dict[str, Any]:
    """The keys the ``status.<function>.custom`` config lists, from each such function's return."""
    out: dict[str, Any] = {}
    conf = __salt__["config.dot_vals"]("status")
    for key, wanted in conf.items():
        func = key.rpartition(".")[0]
        if func == "status.custom":
            continue
        try:
            values = __salt__[func]()
        except KeyError:
            log.warning("custom status %s isn't loaded", func)
            continue
        for item in wanted or []:
            try:
                out[item] = values[item]
            except (KeyError, TypeError):
                log.warning("val %s not in return of %s", item, func)
                out[item] = "UNKNOWN"
    return out


def uptime(**kwargs: Any) -> dict[str, Any]:
    """How long the host has been up, and since when (UTC)."""
    now = _time.time()
    text = _read("/proc/uptime")
    if text is None:
        raise CommandExecutionError("File /proc/uptime was not found.")
    seconds = int(float(text.split()[0]))
    boot = datetime.datetime.fromtimestamp(now - seconds, datetime.UTC).replace(tzinfo=None)
    current = datetime.datetime.fromtimestamp(now, datetime.UTC).replace(tzinfo=None)
    up = current - boot
    out: dict[str, Any] = {
        "seconds": seconds,
        "since_iso": boot.isoformat(),
        "since_t": int(now - seconds),
        "days": up.days,
        "time": f"{up.seconds // 3600}:{up.seconds % 3600 // 60}",
    }
    if shutil.which("who"):
        out["users"] = len(_run("who -s").split(os.linesep))
    return out


def loadavg(**kwargs: Any) -> dict[str, float]:
    """The 1, 5 and 15 minute load averages."""
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError) as exc:
        raise CommandExecutionError("status.loadavag is not available on your platform") from exc
    return {"1-min": one, "5-min": five, "15-min": fifteen}


def cpustats(**kwargs: Any) -> Any:
    """``/proc/stat``: the ``cpu`` totals by kind, ``intr``/``softirq`` counts, the other counters."""

    def linux() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for parts in _lines("/proc/stat"):
            name = parts[0]
            if name == "cpu":
                kinds = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
                out[name] = {kind: _number(parts[i + 1]) for i, kind in enumerate(kinds)}
            elif name == "intr":
                out[name] = {"total": _number(parts[1]), "irqs": [_number(x) for x in parts[2:]]}
            elif name == "softirq":
                out[name] = {"total": _number(parts[1]), "softirqs": [_number(x) for x in parts[2:]]}
            elif len(parts) > 1:
                out[name] = _number(parts[1])
        return out

    return _linux(linux)


def meminfo(**kwargs: Any) -> Any:
    """``/proc/meminfo``: ``{name: {"value": text, "unit": "kB"}}``."""

    def linux() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for parts in _lines("/proc/meminfo"):
            name = parts[0].replace(":", "")
            out[name] = {"value": parts[1]}
            if len(parts) > 2:
                out[name]["unit"] = parts[2]
        return out

    return _linux(linux)


def cpuinfo(**kwargs: Any) -> Any:
    """``/proc/cpuinfo`` as one dict (the last processor's values win, as in Salt); ``flags`` a list."""

    def linux() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for line in (_read("/proc/cpuinfo") or "").splitlines():
            if not line:
                continue
            parts = line.split(":")
            name = parts[0].strip()
            value = parts[1] if len(parts) > 1 else ""
            out[name] = value.split() if name == "flags" else value.strip()
        return out

    return _linux(linux)


_DISKSTATS = (
    "major",
    "minor",
    "device",
    "reads_issued",
    "reads_merged",
    "sectors_read",
    "ms_spent_reading",
    "writes_completed",
    "writes_merged",
    "sectors_written",
    "ms_spent_writing",
    "io_in_progress",
    "ms_spent_in_io",
    "weighted_ms_spent_in_io",
)


def diskstats(**kwargs: Any) -> Any:
    """``/proc/diskstats`` by device name."""

    def linux() -> dict[str, Any]:
        return {
            parts[2]: {name: _number(parts[i]) for i, name in enumerate(_DISKSTATS)}
            for parts in _lines("/proc/diskstats")
            if len(parts) >= len(_DISKSTATS)
        }

    return _linux(linux)


def diskusage(*args: Any, **kwargs: Any) -> dict[str, dict[str, int]]:
    """``{mountpoint: {"available", "total"}}`` in bytes, for the paths (``/...``) and file system
    types (globs) given; every mount with no argument."""
    selected: set[str] = set()
    fstypes: set[str] = set()
    for arg in args or ("*",):
        (selected if str(arg).startswith("/") else fstypes).add(str(arg))
    if fstypes:
        if _kernel() != "Linux":
            raise CommandExecutionError("status.diskusage not yet supported on this platform")
        pattern = re.compile("|".join(fnmatch.translate(t) for t in fstypes))
        text = _read("/proc/mounts")
        if text is None:
            return {}
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3 and pattern.match(parts[2]):
                selected.add(parts[1])
    out: dict[str, dict[str, int]] = {}
    for path in selected:
        try:
            st = os.statvfs(path)
        except OSError as exc:
            raise CommandExecutionError(f"statvfs of {path} failed: {exc.strerror}") from exc
        out[path] = {"available": st.f_bavail * st.f_bsize, "total": st.f_blocks * st.f_bsize}
    return out


def vmstats(**kwargs: Any) -> Any:
    """``/proc/vmstat`` counters."""
    return _linux(lambda: {parts[0]: _number(parts[1]) for parts in _lines("/proc/vmstat") if len(parts) > 1})


def nproc(**kwargs: Any) -> Any:
    """The number of processing units available (``nproc``)."""

    def linux() -> Any:
        return _number(_run("nproc").strip())

    return _linux(linux)


def netstats(**kwargs: Any) -> Any:
    """``/proc/net/netstat``: ``{"TcpExt": {counter: n}, "IpExt": {...}}``."""

    def linux() -> dict[str, Any]:
        out: dict[str, Any] = {}
        header: list[str] = [""]
        for parts in _lines("/proc/net/netstat"):
            if parts[0] == header[0]:
                out[header[0].replace(":", "")] = {
                    header[i]: _number(parts[i]) for i in range(1, len(header) - 1) if i < len(parts)
                }
            else:
                header = parts
        return out

    return _linux(linux)


_NETDEV = (
    "rx_bytes",
    "rx_packets",
    "rx_errs",
    "rx_drop",
    "rx_fifo",
    "rx_frame",
    "rx_compressed",
    "rx_multicast",
    "tx_bytes",
    "tx_packets",
    "tx_errs",
    "tx_drop",
    "tx_fifo",
    "tx_colls",
    "tx_carrier",
    "tx_compressed",
)


def netdev(**kwargs: Any) -> Any:
    """``/proc/net/dev`` counters by interface."""

    def linux() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for line in (_read("/proc/net/dev") or "").splitlines():
            if ":" not in line:
                continue
            iface, _, rest = line.partition(":")
            values = rest.split()
            if len(values) < len(_NETDEV):
                continue
            entry: dict[str, Any] = {"iface": iface.strip()}
            entry.update({name: _number(values[i]) for i, name in enumerate(_NETDEV)})
            out[iface.strip()] = entry
        return out

    return _linux(linux)


def w(**kwargs: Any) -> Any:
    """Logged-in users (``w -fh``): user, tty, login, idle, jcpu, pcpu, what."""

    def linux() -> list[dict[str, str]]:
        users = []
        for row in _run("w -fh").splitlines():
            parts = row.split()
            if len(parts) < 6:
                continue
            users.append(
                {
                    "idle": parts[3],
                    "jcpu": parts[4],
                    "login": parts[2],
                    "pcpu": parts[5],
                    "tty": parts[1],
                    "user": parts[0],
                    "what": " ".join(parts[6:]),
                }
            )
        return users

    return _linux(linux)


def all_status(**kwargs: Any) -> dict[str, Any]:
    """Every status above in one dict."""
    return {
        "cpuinfo": cpuinfo(),
        "cpustats": cpustats(),
        "diskstats": diskstats(),
        "diskusage": diskusage(),
        "loadavg": loadavg(),
        "meminfo": meminfo(),
        "netdev": netdev(),
        "netstats": netstats(),
        "uptime": uptime(),
        "vmstats": vmstats(),
        "w": w(),
    }


def pid(sig: str, **kwargs: Any) -> str:
    """The PIDs (one a line) of the processes whose ``ps`` line matches the regex ``sig``."""
    mine = str(os.getpid())
    output = str(__salt__["cmd.run_stdout"](__grains__.get("ps") or "ps -efHww", python_shell=True))
    found = [line.split()[1] for line in output.splitlines() if mine not in line and re.search(sig, line)]
    return "\n".join(found)


def version(**kwargs: Any) -> Any:
    """``/proc/version``."""

    def linux() -> Any:
        text = _read("/proc/version")
        return {} if text is None else text.strip()

    return _linux(linux)


def time_(format: str = "%A, %d. %B %Y %I:%M%p", **kwargs: Any) -> str:
    """The host's local time, formatted with ``format`` (strftime)."""
    return datetime.datetime.now().strftime(format)  # naive local time (%Z empty), as Salt
