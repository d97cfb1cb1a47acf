"""Execution module ``timezone``: the system time zone and the hardware clock's (UTC or local).

Runs on the managed host (minion / ``briny-call``). Functions and answers are
Salt 3007's: ``get_zone`` (``America/Denver``), ``set_zone``,
``zone_compare`` (whether ``/etc/localtime`` holds that zone's data),
``get_hwclock`` / ``set_hwclock`` (``UTC`` or ``localtime``), ``get_offset``
(``-0700``) and ``get_zonecode`` (``MST``).

Where systemd runs as PID 1, the work goes through ``timedatectl``, as in
Salt. Elsewhere (a container, a chroot, a host without systemd) briny works
on the files themselves, Debian's way: ``/etc/localtime`` (a symlink into
``/usr/share/zoneinfo``, replaced atomically), ``/etc/timezone``, and the
clock mode on the third line of ``/etc/adjtime`` (``UTC`` / ``LOCAL``, as
``hwclock(8)`` reads it; no ``/etc/adjtime`` means UTC), plus the ``UTC=``
line of ``/etc/default/rcS`` where that file still has one.

A difference from Salt, on purpose: Salt 3007 asks ``timedatectl`` whenever
it is installed, so on a host with Debian's ``systemd`` package but no
systemd running (this project's containers) ``get_zone``, ``get_hwclock``
and the ``timezone.system`` state stop with a traceback ("timedatectl
failed: System has not been booted with systemd as init system"); briny
answers from the files there. A zone name that is not a file under
``/usr/share/zoneinfo`` (``../../etc/passwd`` included) is refused.
"""

from __future__ import annotations

import filecmp
import logging
import os
import re
import shutil
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host import systemd as _systemd
from briny.minion.host.fileops import managed as _managed

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

# Where things are (module globals, so tests can point them elsewhere)
LOCALTIME = "/etc/localtime"
TIMEZONE_FILE = "/etc/timezone"
ADJTIME = "/etc/adjtime"
RCS = "/etc/default/rcS"
ZONEINFO = "/usr/share/zoneinfo"
_ADJTIME_NEW = "0.0 0 0.0\n0\n{}\n"


def _timedatectl() -> bool:
    """Whether to use ``timedatectl``: installed, and systemd runs as PID 1."""
    return _systemd.booted() and shutil.which("timedatectl") is not None


def _run(cmd: list[str]) -> dict[str, Any]:
    return __salt__["cmd.run_all"](cmd, python_shell=False, ignore_retcode=True)


def _timedatectl_status() -> str:
    out = _run(["timedatectl"])
    if out["retcode"] != 0:
        raise CommandExecutionError(f"timedatectl failed: {out.get('stderr', '')}")
    return str(out.get("stdout", ""))


def _zone_file(timezone: Any) -> str:
    """The zoneinfo file of ``timezone``; refuses names that leave the zoneinfo folder."""
    name = str(timezone)
    path = os.path.normpath(os.path.join(ZONEINFO, name))
    if not name or name.startswith("/") or not path.startswith(ZONEINFO.rstrip("/") + "/") or not os.path.isfile(path):
        raise SaltInvocationError(f'Can\'t find a local timezone "{timezone}"')
    return path


def _write(path: str, text: str) -> None:
    """Replace ``path`` atomically (a new file gets mode 0644)."""
    _managed.write(path, text.encode("utf-8"), exact_mode=None if os.path.exists(path) else "0644")


def _zone_from_link() -> str:
    try:
        target = os.path.normpath(os.path.join(os.path.dirname(LOCALTIME), os.readlink(LOCALTIME)))
    except OSError as exc:
        raise CommandExecutionError(f"Unable to determine timezone: {LOCALTIME}: {exc.strerror}") from exc
    prefix = ZONEINFO.rstrip("/") + "/"
    if target.startswith(prefix):
        return target[len(prefix) :]
    raise CommandExecutionError(f"Unable to determine timezone: {LOCALTIME} points to {target}")


def get_zone(**kwargs: Any) -> str:
    """The system time zone, e.g. ``America/Denver``."""
    if _timedatectl():
        text = _timedatectl_status()
        for line in text.splitlines():
            m = re.match(r"\s*Time ?zone:\s+(\S+)", line)
            if m:
                return m.group(1)
        raise CommandExecutionError(f"Failed to parse timedatectl output: {text}")
    try:
        with open(TIMEZONE_FILE, encoding="utf-8") as fh:
            zone = fh.read().strip()
        if zone:
            return zone
    except OSError:
        pass
    return _zone_from_link()


def zone_compare(timezone: str, **kwargs: Any) -> bool:
    """Whether the system's time zone data (``/etc/localtime``) is that of ``timezone``."""
    zonefile = _zone_file(timezone)
    try:
        return filecmp.cmp(LOCALTIME, zonefile, shallow=False)
    except OSError as exc:
        raise CommandExecutionError(
            f"Failed to read {LOCALTIME} to determine current timezone: {exc.strerror}"
        ) from exc


def set_zone(timezone: str, **kwargs: Any) -> bool:
    """Make ``timezone`` the system time zone (``/etc/localtime`` and ``/etc/timezone``)."""
    zonefile = _zone_file(timezone)
    if _timedatectl():
        out = _run(["timedatectl", "set-timezone", str(timezone)])
        if out["retcode"] != 0:
            raise CommandExecutionError(f"timedatectl set-timezone failed: {out.get('stderr', '')}")
        return True
    tmp = os.path.join(os.path.dirname(LOCALTIME), f".{os.path.basename(LOCALTIME)}.briny")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(zonefile, tmp)
    os.replace(tmp, LOCALTIME)
    if os.path.exists(TIMEZONE_FILE) or os.path.isdir(os.path.dirname(TIMEZONE_FILE)):
        _write(TIMEZONE_FILE, f"{str(timezone).strip()}\n")
    return True


def _adjtime_mode() -> str | None:
    try:
        with open(ADJTIME, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    return lines[2].strip().upper() if len(lines) > 2 else None


def _rcs_utc() -> str | None:
    try:
        with open(RCS, encoding="utf-8") as fh:
            for line in fh:
                m = re.match(r"^\s*UTC=(\S*)", line)
                if m:
                    return m.group(1).strip("'\"").lower()
    except OSError:
        pass
    return None


def get_hwclock(**kwargs: Any) -> str:
    """How the hardware clock keeps time: ``UTC`` or ``localtime``."""
    if _timedatectl():
        text = _timedatectl_status()
        for line in text.splitlines():
            if "rtc in local tz" in line.lower():
                return "localtime" if line.split(":")[-1].strip().lower() == "yes" else "UTC"
        raise CommandExecutionError(f"Failed to parse timedatectl output: {text}")
    rcs = _rcs_utc()
    if rcs is not None:
        return "UTC" if rcs == "yes" else "localtime"
    return "localtime" if _adjtime_mode() == "LOCAL" else "UTC"


def set_hwclock(clock: str, **kwargs: Any) -> bool:
    """Make the hardware clock keep ``UTC`` or ``localtime``."""
    if clock not in ("UTC", "localtime"):
        raise SaltInvocationError("Only 'UTC' and 'localtime' are allowed")
    if _timedatectl():
        out = _run(["timedatectl", "set-local-rtc", "true" if clock == "localtime" else "false"])
        return bool(out["retcode"] == 0)
    mode = "LOCAL" if clock == "localtime" else "UTC"
    try:
        with open(ADJTIME, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        lines = []
    if len(lines) >= 2:
        _write(ADJTIME, "\n".join([*lines[:2], mode, *lines[3:]]) + "\n")
    else:
        _write(ADJTIME, _ADJTIME_NEW.format(mode))
    if _rcs_utc() is not None:
        with open(RCS, encoding="utf-8") as fh:
            text = fh.read()
        _write(RCS, re.sub(r"(?m)^(\s*)UTC=.*$", r"\g<1>UTC=" + ("yes" if clock == "UTC" else "no"), text))
    return True


def get_offset(**kwargs: Any) -> str:
    """The current offset from UTC, e.g. ``-0700``."""
    return str(__salt__["cmd.run"](["date", "+%z"], python_shell=False))


def get_zonecode(**kwargs: Any) -> str:
    """The current zone abbreviation, e.g. ``MST``."""
    return str(__salt__["cmd.run"](["date", "+%Z"], python_shell=False))
