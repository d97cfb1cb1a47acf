"""Execution module ``disk``: mounted file systems' usage and block device attributes (Salt 3007's).

Runs on the managed host and reads it (``df -P``, ``df -iP``, ``blkid``
through ``cmd.run``), so none of these is pure. Answers are Salt's, text
as ``df`` prints it: ``usage`` gives ``{mountpoint: {"filesystem",
"1K-blocks", "used", "available", "capacity"}}``, ``inodeusage``
``{mountpoint: {"inodes", "used", "free", "use", "filesystem"}}``,
``percent`` ``{mountpoint: "NN%"}`` (or one mountpoint's value), ``blkid``
``{device: {"UUID", "TYPE", ...}}``. ``args`` are ``df`` flags, each one of
``aBhHiklPtTxv`` (another is refused, as Salt does). Linux only (briny's
minions): the BSD, Darwin, SunOS and AIX layouts are not read. ``tune``,
``wipe``, ``format_``, ``resize2fs``, ``hdparms``, ``smart_attributes``,
``iostat`` and ``dump`` are not provided.
"""

from __future__ import annotations

import logging
import os
import shutil
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host.sysfiles import fstab

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

log = logging.getLogger(__name__)

_FLAGS = "aBhHiklPtTxv"


def _flags(args: Any, caller: str) -> str:
    if args is None:
        return ""
    flags = ""
    for flag in args:
        if flag not in _FLAGS:
            raise CommandExecutionError(f"Invalid flag passed to {caller}")
        flags += flag
    return flags


def _df(cmd: str) -> list[list[str]]:
    """The rows of ``df`` output, a file system name with spaces joined back into one field."""
    rows = []
    pending = None
    for line in str(__salt__["cmd.run"](cmd, python_shell=False)).splitlines():
        if not line or line.startswith("Filesystem"):
            continue
        if pending:
            line = f"{pending} {line}"
        cols = line.split()
        if len(cols) == 1:  # a long device name: its numbers are on the next line
            pending = line
            continue
        pending = None
        while len(cols) >= 2 and not cols[1].isdigit():
            cols[0] = f"{cols[0]} {cols[1]}"
            cols.pop(1)
        if len(cols) >= 2:
            rows.append(cols)
    return rows


def usage(args: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Usage of every mounted file system (``df -P``)."""
    flags = _flags(args, "disk.usage")
    if not os.path.isfile("/etc/mtab"):
        log.error("df cannot run without /etc/mtab")
        return {}
    out: dict[str, Any] = {}
    for cols in _df("df -P" + (f" -{flags}" if flags else "")):
        if len(cols) < 6:
            log.error("Problem parsing disk usage information")
            return {}
        out[cols[5]] = {
            "filesystem": cols[0],
            "1K-blocks": cols[1],
            "used": cols[2],
            "available": cols[3],
            "capacity": cols[4],
        }
    return out


def inodeusage(args: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Inode usage of every mounted file system (``df -iP``)."""
    flags = _flags(args, "disk.inodeusage")
    out: dict[str, Any] = {}
    cmd = "df -iP" + (f" -{flags}" if flags else "")
    for line in str(__salt__["cmd.run"](cmd, python_shell=False)).splitlines():
        cols = line.split()
        if not cols or line.startswith("Filesystem"):
            continue
        if len(cols) < 6:
            log.error("Problem parsing inode usage information")
            return {}
        out[cols[5]] = {"inodes": cols[1], "used": cols[2], "free": cols[3], "use": cols[4], "filesystem": cols[0]}
    return out


def percent(args: str | None = None, **kwargs: Any) -> Any:
    """The used percentage of every mounted file system, or of the mountpoint ``args``."""
    out: dict[str, str] = {}
    for cols in _df("df -P"):
        if len(cols) < 6:
            log.error("Problem parsing disk usage information")
            return {}
        out[cols[5]] = cols[4]
    if args and args not in out:
        log.error("Problem parsing disk usage information: Partition '%s' does not exist!", args)
        return {}
    return out[args] if args else out


def blkid(device: str | None = None, token: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """Attributes (``UUID``, ``TYPE``, ``LABEL``, ...) of block devices: all, one ``device``, or
    those a ``token`` (``TYPE=ext4``) selects; ``{}`` when ``blkid`` finds none."""
    if not shutil.which("blkid"):
        raise CommandExecutionError("The blkid binary is not available on this host")
    cmd = ["blkid"]
    if device:
        cmd.append(device)
    elif token:
        cmd.extend(["-t", token])
    res = __salt__["cmd.run_all"](cmd, python_shell=False, ignore_retcode=True)
    if res["retcode"] > 0:
        return {}
    return fstab.blkid(str(res["stdout"]))
