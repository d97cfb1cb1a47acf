"""Mount tables as Salt 3007's ``mount`` module reads and writes them.

- fstab (and Solaris' vfstab): a line is an entry when it splits into 4 to
  6 fields (vfstab: 7); comments, blank and malformed lines are kept as
  they are. Entries are matched on ``match_on`` keys (``auto``: the mount
  point for pseudo file systems such as tmpfs and proc, the device
  otherwise); options compare as sets. A changed entry is written in Salt's
  layout (``DEVICE<tab><tab>DIR<tab>TYPE<tab>OPTS<tab>DUMP PASS``) in place
  of the old one, a new one at the end; every other line stays byte for
  byte.
- ``/proc/self/mountinfo``, ``/proc/self/mounts``, ``mount -l``,
  ``/proc/swaps`` and ``blkid`` output, read into Salt's dicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from briny.common.exceptions import CommandExecutionError


@dataclass(frozen=True)
class TableFormat:
    keys: tuple[str, ...]
    line: str
    fields: tuple[int, int]
    special: frozenset[str]
    listing_keys: tuple[str, ...]


FSTAB = TableFormat(
    keys=("device", "name", "fstype", "opts", "dump", "pass_num"),
    line="{device}\t\t{name}\t{fstype}\t{opts}\t{dump} {pass_num}\n",
    fields=(4, 6),
    special=frozenset(
        [
            "none",
            "tmpfs",
            "sysfs",
            "proc",
            "fusectl",
            "debugfs",
            "securityfs",
            "devtmpfs",
            "cgroup",
            "nfs",
            "nfs4",
            "glusterfs",
            "btrfs",
        ]
    ),
    listing_keys=("device", "name", "fstype", "opts", "dump", "pass"),
)
VFSTAB = TableFormat(
    keys=("device", "device_fsck", "name", "fstype", "pass_fsck", "mount_at_boot", "opts"),
    line="{device:<11} {device_fsck:<3} {name:<19} {fstype:<8} {pass_fsck:<3} {mount_at_boot:<6} {opts}\n",
    fields=(7, 7),
    special=frozenset(["devfs", "proc", "ctfs", "objfs", "sharefs", "fs", "tmpfs"]),
    listing_keys=("device", "device_fsck", "name", "fstype", "pass_fsck", "mount_at_boot", "opts"),
)


def parse_entry(line: str, fmt: TableFormat = FSTAB, keys: tuple[str, ...] | None = None) -> dict[str, str] | None:
    """The fields of an entry line, or None for a comment or a line that is no entry."""
    if line.startswith("#"):
        return None
    comps = line.split()
    low, high = fmt.fields
    if not low <= len(comps) <= high:
        return None
    keys = keys or fmt.keys
    comps += ["0"] * (len(keys) - len(comps))
    return dict(zip(keys, comps))


def criteria(**values: Any) -> dict[str, str]:
    """Salt's criteria: the given values as strings, None dropped."""
    return {k: str(v) for k, v in values.items() if v is not None}


def matches(crit: dict[str, str], entry: dict[str, str]) -> bool:
    for key, value in crit.items():
        if key == "opts":
            if sorted(entry.get(key, "").split(",")) != sorted(value.split(",")):
                return False
        elif entry.get(key) != value:
            return False
    return True


def match_keys(match_on: Any, fstype: str, fmt: TableFormat = FSTAB) -> list[str]:
    """The keys an entry is found by (``auto``: the mount point for pseudo file systems)."""
    if isinstance(match_on, list):
        keys = [str(k) for k in match_on]
    elif not isinstance(match_on, str):
        raise CommandExecutionError("match_on must be a string or list of strings")
    elif match_on == "auto":
        keys = ["name"] if fstype in fmt.special else ["device"]
    else:
        keys = [match_on]
    unknown = [k for k in keys if k not in fmt.keys]
    if unknown:
        raise CommandExecutionError(f'Unrecognized keys in match_on: "{", ".join(unknown)}"')
    return keys


def set_entry(
    lines: list[str], entry: dict[str, str], keys: list[str], not_change: bool = False, fmt: TableFormat = FSTAB
) -> tuple[list[str], str]:
    """Salt's ``set_fstab`` on the lines: (new lines, ``present`` / ``change`` / ``new``)."""
    find = {k: entry[k] for k in keys}
    status = None
    out = []
    for line in lines:
        found = parse_entry(line, fmt)
        if found is None or not matches(find, found):
            out.append(line)
            continue
        status = "present"
        if matches(entry, found) or not_change:
            out.append(line)
        else:
            status = "change"
            out.append(fmt.line.format(**entry))
    if status is None:
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        out.append(fmt.line.format(**entry))
        status = "new"
    return out, status


def remove_entries(lines: list[str], crit: dict[str, str], fmt: TableFormat = FSTAB) -> tuple[list[str], bool]:
    kept = [line for line in lines if (found := parse_entry(line, fmt)) is None or not matches(crit, found)]
    return kept, len(kept) != len(lines)


def listing(lines: list[str], fmt: TableFormat = FSTAB) -> dict[str, dict[str, Any]]:
    """Salt's ``mount.fstab``: ``{mount point: {device, fstype, opts: [...], dump, pass}}``;
    a mount point listed twice gets ``_`` appended."""
    out: dict[str, dict[str, Any]] = {}
    for line in lines:
        entry: dict[str, Any] | None = parse_entry(line, fmt, fmt.listing_keys)
        if entry is None:
            continue
        entry["opts"] = entry["opts"].split(",")
        name = entry.pop("name")
        while name in out:
            name += "_"
        out[name] = entry
    return out


# ---------------------------------------------------------------- what the kernel shows


def list_mounts(text: str) -> dict[str, str]:
    """``mount -l``: mount point -> device as mount names it."""
    out = {}
    for line in text.split("\n"):
        comps = line.split()
        if len(comps) >= 3:
            out[comps[2]] = comps[0]
    return out


def unescape_opts(opts: list[str], ids: Callable[[str, str], Any]) -> list[str]:
    """``uid=NAME`` / ``gid=NAME`` as numbers (``ids(kind, name)``), ``\\040`` as ``\\ ``."""
    out = []
    for opt in opts:
        key, _, value = opt.partition("=")
        if key in ("uid", "gid") and value and not re.match("[0-9]+$", value):
            found = ids(key, value)
            if found is not None:
                opt = f"{key}={found}"
        out.append(opt.replace("\\040", "\\ "))
    return out


def mountinfo(
    text: str, alt: dict[str, str], blkid: dict[str, dict[str, str]], ids: Callable[[str, str], Any]
) -> dict[str, dict[str, Any]]:
    """``/proc/self/mountinfo`` in Salt's extended ``mount.active`` form (the last mount on a point wins)."""
    out: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        comps = line.split()
        if "-" not in comps:
            continue
        sep = comps.index("-")
        major, _, minor = comps[2].partition(":")
        device = comps[sep + 2]
        info = blkid.get(device, {})
        uuid = info.get("UUID")
        out[comps[4]] = {
            "mountid": comps[0],
            "parentid": comps[1],
            "major": major,
            "minor": minor,
            "root": comps[3],
            "opts": unescape_opts(comps[5].split(","), ids),
            "fstype": comps[sep + 1],
            "device": device.replace("\\040", "\\ "),
            "alt_device": alt.get(comps[4]),
            "superopts": unescape_opts(comps[sep + 3].split(","), ids),
            "device_uuid": uuid.lower() if uuid else None,
            "device_label": info.get("LABEL"),
        }
    return out


def mounts(text: str, alt: dict[str, str], ids: Callable[[str, str], Any]) -> dict[str, dict[str, Any]]:
    """``/proc/self/mounts`` in Salt's plain ``mount.active`` form."""
    out: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        comps = line.split()
        if len(comps) >= 4:
            out[comps[1]] = {
                "device": comps[0],
                "alt_device": alt.get(comps[1]),
                "fstype": comps[2],
                "opts": unescape_opts(comps[3].split(","), ids),
            }
    return out


def swaps(text: str) -> dict[str, dict[str, str]]:
    """``/proc/swaps``: ``{name: {type, size, used, priority}}``."""
    out = {}
    for line in text.splitlines():
        comps = line.split()
        if line.startswith("Filename") or len(comps) < 5:
            continue
        out[comps[0]] = {"type": comps[1], "size": comps[2], "used": comps[3], "priority": comps[4]}
    return out


def blkid(text: str) -> dict[str, dict[str, str]]:
    """``blkid`` output: ``{device: {LABEL, UUID, TYPE, ...}}``."""
    out = {}
    for line in text.splitlines():
        device, sep, rest = line.partition(": ")
        if not sep:
            continue
        out[device] = dict(re.findall(r'([\w-]+)="([^"]*)"', rest))
    return out
