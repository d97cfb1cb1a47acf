"""Execution module ``mount``: mounts, fstab and swap on Linux (Salt 3007's ``mount``).

Functions, arguments and return values are Salt's: ``active``
(``/proc/self/mounts``; ``extended=True``: ``/proc/self/mountinfo`` with
``superopts``, ``alt_device`` from ``mount -l``, ``device_uuid`` /
``device_label`` from ``blkid``), ``fstab`` / ``vfstab`` (``{mount point:
{device, fstype, opts, dump, pass}}``), ``set_fstab`` / ``set_vfstab``
(``"present"`` / ``"change"`` / ``"new"``; ``test=True`` writes nothing),
``rm_fstab`` / ``rm_vfstab`` (True), ``mount`` / ``remount`` / ``umount``
(True, or mount's error text), ``is_mounted``, ``swaps``, ``swapon``
(``{"stats": ..., "new": bool}``), ``swapoff`` (True / False / None when
not on), ``read_mount_cache`` / ``write_mount_cache`` /
``delete_mount_cache`` (``cachedir/mounts``, YAML, as Salt keeps it),
``is_fuse_exec``, ``get_mount_from_path``, ``get_device_from_path``.
Salt's errors: ``Bad config file "F"``, ``Couldn't read from F: ...``,
``File not writable F``, ``match_on must be a string or list of strings``.

The table format is :mod:`briny.minion.host.sysfiles.fstab`'s. A table is
rewritten atomically (a temporary file and a rename, owner and mode kept)
and only when an entry changes; every other line stays as it was. macOS'
automaster and AIX' filesystems tables are not supported (Linux only);
``util`` other than ``mount`` (guestfs, qemu_nbd) is refused.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

import yaml
from briny.common.exceptions import CommandExecutionError
from briny.minion.host.sysfiles import fstab as tables
from briny.minion.host.sysfiles.replace import replace_text

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __opts__, __salt__


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _context() -> dict[str, Any]:
    return __context__


def _ids(kind: str, name: str) -> Any:
    info = _salt("user.info" if kind == "uid" else "group.info")(name)
    return info.get(kind) if info else None


def _read_proc(path: str) -> str:
    if not os.access(path, os.R_OK):
        raise CommandExecutionError(f"File not readable {path}")
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        return fh.read()


def _blkid() -> dict[str, dict[str, str]]:
    if "disk.blkid" not in _context():
        _context()["disk.blkid"] = _salt("disk.blkid")()
    return _context()["disk.blkid"]


def active(extended: bool = False, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """The mounts now: ``{mount point: {device, fstype, opts, ...}}``."""
    alt = tables.list_mounts(str(_salt("cmd.run_stdout")(["mount", "-l"], python_shell=False)))
    if extended:
        try:
            return tables.mountinfo(_read_proc("/proc/self/mountinfo"), alt, _blkid(), _ids)
        except CommandExecutionError:
            pass
    return tables.mounts(_read_proc("/proc/self/mounts"), alt, _ids)


def _lines(config: str) -> list[str]:
    try:
        with open(config, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read().splitlines(keepends=True)
    except OSError as exc:
        raise CommandExecutionError(f"Couldn't read from {config}: {exc}") from None


def _save(config: str, lines: list[str]) -> None:
    try:
        replace_text(config, "".join(lines), errors="surrogateescape")
    except OSError:
        raise CommandExecutionError(f"File not writable {config}") from None


def fstab(config: str = "/etc/fstab", **kwargs: Any) -> dict[str, dict[str, Any]]:
    """The entries of the fstab ``config`` (``{}`` when it is not a file)."""
    if not os.path.isfile(config):
        return {}
    return tables.listing(_lines(config))


def vfstab(config: str = "/etc/vfstab", **kwargs: Any) -> dict[str, dict[str, Any]]:
    """Salt's ``vfstab``: on Linux the same as ``fstab`` on another file."""
    return fstab(config)


def rm_fstab(name: str, device: str | None, config: str = "/etc/fstab", **kwargs: Any) -> bool:
    """Remove the entries for mount point ``name`` (and ``device``, when given)."""
    lines, removed = tables.remove_entries(_lines(config), tables.criteria(name=name, device=device))
    if removed:
        _save(config, lines)
    return True


def rm_vfstab(name: str, device: str | None, config: str = "/etc/vfstab", **kwargs: Any) -> bool:
    return rm_fstab(name, device, config)


def _set(
    fmt: tables.TableFormat, entry: dict[str, Any], config: str, test: bool, match_on: Any, not_change: bool
) -> str:
    wanted = tables.criteria(**entry)
    keys = tables.match_keys(match_on, wanted["fstype"], fmt)
    if not os.path.isfile(config):
        raise CommandExecutionError(f'Bad config file "{config}"')
    lines, status = tables.set_entry(_lines(config), wanted, keys, not_change, fmt)
    if status != "present" and not test:
        _save(config, lines)
    return status


def set_fstab(
    name: str,
    device: str,
    fstype: str,
    opts: Any = "defaults",
    dump: Any = 0,
    pass_num: Any = 0,
    config: str = "/etc/fstab",
    test: bool = False,
    match_on: Any = "auto",
    not_change: bool = False,
    **kwargs: Any,
) -> str:
    """Make ``config`` hold this entry: ``present``, ``change`` (rewritten) or ``new`` (added)."""
    if isinstance(opts, list):
        opts = ",".join(opts)
    entry = {
        "name": name,
        "device": str(device).replace("\\ ", "\\040"),
        "fstype": fstype,
        "opts": str(opts).replace("\\ ", "\\040"),
        "dump": dump,
        "pass_num": pass_num,
    }
    return _set(tables.FSTAB, entry, config, bool(test), match_on, not_change)


def set_vfstab(
    name: str,
    device: str,
    fstype: str,
    opts: Any = "-",
    device_fsck: str = "-",
    pass_fsck: str = "-",  # noqa: S107 - the fsck pass number (Salt's argument name), not a password
    mount_at_boot: str = "yes",
    config: str = "/etc/vfstab",
    test: bool = False,
    match_on: Any = "auto",
    not_change: bool = False,
    **kwargs: Any,
) -> str:
    """Salt's ``set_vfstab`` (Solaris' vfstab layout)."""
    if isinstance(opts, list):
        opts = ",".join(opts)
    entry = {
        "name": name,
        "device": device,
        "fstype": fstype,
        "opts": opts,
        "device_fsck": device_fsck,
        "pass_fsck": pass_fsck,
        "mount_at_boot": "yes" if mount_at_boot == "yes" else "no",
    }
    return _set(tables.VFSTAB, entry, config, bool(test), match_on, not_change)


def _run(cmd: list[str], user: str | None) -> Any:
    out = _salt("cmd.run_all")(cmd, runas=user, python_shell=False)
    return out["stderr"] if out["retcode"] else True


def _util(util: str) -> None:
    if util != "mount":
        raise CommandExecutionError(f"util={util} is not supported by briny (only util=mount)")


def mount(
    name: str,
    device: Any = False,
    mkmnt: bool = False,
    fstype: str = "",
    opts: Any = "defaults",
    user: str | None = None,
    util: str = "mount",
    **kwargs: Any,
) -> Any:
    """Mount ``device`` on ``name`` (``mount NAME`` alone uses the fstab); True or mount's error."""
    _util(util)
    if isinstance(opts, str):
        opts = opts.split(",")
    if not os.path.exists(name) and mkmnt:
        _salt("file.mkdir")(name, user=user)
    cmd = ["mount"]
    if device:
        if opts is not None:
            cmd += ["-o", ",".join(opts)]
        if fstype:
            cmd += ["-t", fstype]
        cmd.append(str(device))
    cmd.append(name)
    return _run(cmd, user)


def remount(
    name: str,
    device: Any,
    mkmnt: bool = False,
    fstype: str = "",
    opts: Any = "defaults",
    user: str | None = None,
    **kwargs: Any,
) -> Any:
    """Remount ``name`` with ``opts`` (mount it when it is not mounted)."""
    if isinstance(opts, str):
        opts = opts.split(",")
    opts = list(opts or [])
    if name not in active():
        return mount(name, device, mkmnt, fstype, opts, user=user)
    if "remount" not in opts:
        opts.append("remount")
    cmd = ["mount", "-o", ",".join(opts)] + (["-t", fstype] if fstype else []) + [str(device), name]
    return _run(cmd, user)


def umount(
    name: str,
    device: str | None = None,
    user: str | None = None,
    util: str = "mount",
    lazy: bool = False,
    **kwargs: Any,
) -> Any:
    """Unmount ``name`` (or ``device``); True, ``NAME does not have anything mounted`` or umount's error."""
    _util(util)
    if name not in active():
        return f"{name} does not have anything mounted"
    return _run(["umount"] + (["-l"] if lazy else []) + [device or name], user)


def is_mounted(name: str, **kwargs: Any) -> bool:
    return name in active()


def is_fuse_exec(cmd: str, **kwargs: Any) -> bool:
    """True when the program ``cmd`` links libfuse."""
    path = shutil.which(cmd)
    if not path:
        return False
    if not shutil.which("ldd"):
        raise CommandExecutionError("ldd")
    return "libfuse" in str(_salt("cmd.run")(["ldd", path], python_shell=False))


def swaps(**kwargs: Any) -> dict[str, dict[str, str]]:
    """Active swap: ``{name: {type, size, used, priority}}``."""
    return tables.swaps(_read_proc("/proc/swaps"))


def swapon(name: str, priority: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Turn swap on ``name`` on: ``{"stats": ..., "new": True}`` (``new`` False when it was on)."""
    found = swaps()
    if name in found:
        return {"stats": found[name], "new": False}
    _salt("cmd.run")(["swapon", name] + (["-p", str(priority)] if priority else []), python_shell=False)
    found = swaps()
    return {"stats": found[name], "new": True} if name in found else {}


def swapoff(name: str, **kwargs: Any) -> bool | None:
    """Turn swap on ``name`` off: True, False when it stayed on, None when it was not on."""
    if name not in swaps():
        return None
    _salt("cmd.run")(["swapoff", name], python_shell=False)
    return name not in swaps()


def _cache_file() -> str:
    return os.path.join(str(__opts__.get("cachedir") or "/var/cache/briny/minion"), "mounts")


def _read_cache() -> dict[str, Any]:
    try:
        with open(_cache_file(), encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(cache: dict[str, Any]) -> None:
    try:
        os.makedirs(os.path.dirname(_cache_file()), exist_ok=True)
        replace_text(_cache_file(), yaml.safe_dump(cache))
    except OSError:
        raise CommandExecutionError("Unable to write mount cache.") from None


def read_mount_cache(name: str, **kwargs: Any) -> dict[str, Any]:
    """What the last mount of ``name`` by a state used (device, fstype, mkmnt, opts), or ``{}``."""
    return (_read_cache().get("mounts") or {}).get(name, {})


def write_mount_cache(real_name: str, device: str, mkmnt: bool, fstype: str, mount_opts: Any, **kwargs: Any) -> bool:
    cache = _read_cache()
    cache.setdefault("mounts", {})
    cache["mounts"] = cache["mounts"] or {}
    cache["mounts"][real_name] = {"device": device, "fstype": fstype, "mkmnt": mkmnt, "opts": mount_opts}
    _write_cache(cache)
    return True


def delete_mount_cache(real_name: str, **kwargs: Any) -> bool:
    cache = _read_cache()
    if real_name in (cache.get("mounts") or {}):
        del cache["mounts"][real_name]
        _write_cache(cache)
    return True


def get_mount_from_path(path: str, **kwargs: Any) -> str:
    """The mount point ``path`` lives on."""
    path = os.path.realpath(os.path.abspath(path))
    while path != os.path.sep:
        if os.path.ismount(path):
            return path
        path = os.path.abspath(os.path.join(path, os.pardir))
    return path


def get_device_from_path(path: str, **kwargs: Any) -> str | None:
    """The device of the mount ``path`` lives on."""
    return active().get(get_mount_from_path(path), {}).get("device")
