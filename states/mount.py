"""The ``mount`` state module: mounts, fstab entries and swap on Linux (Salt 3007's ``mount``).

Runs wherever states run; the work goes through the ``mount`` execution
module. ``mounted`` mounts ``device`` on ``name`` (``mkmnt`` creates the
folder), remounts it when the options the kernel shows differ from
``opts`` (Salt's rules: options it never shows, ``extra_mount_*``,
``hidden_opts``), unmounts a different device first, and with ``persist``
(default) writes the entry into ``config`` (default ``/etc/fstab``,
matched by ``match_on``); ``unmounted`` unmounts (``persist`` removes the
entry); ``swap`` turns swap on and records it; ``fstab_present`` /
``fstab_absent`` edit the table only; ``mod_watch`` remounts. Devices may be
paths, ``UUID=`` or ``LABEL=`` (through ``blkid``). Comments and changes are
Salt's, checked against the reference: ``Target was successfully mounted.
Added new entry to the fstab.`` (``{"mount": True, "persist": "new"}``),
``Target was already mounted. Entry already exists in the fstab.``,
``Forced remount because options (...) changed``, ``Target was successfully
unmounted. Removed target from fstab``, ``... would be mounted``,
``Remount would be forced because options (...) changed``, ...

Deliberate differences from Salt (docs/SYSFILES.md says why): options are
compared one by one, and a remount names the options that changed; a failed
(re)mount fails the state; ``LABEL=`` is looked up line by line; a missing
``config`` fails with ``However, the fstab was not found.``; unknown
arguments of ``mounted`` / ``unmounted`` are named in a warning. Linux only.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _salt, _testing

if TYPE_CHECKING:
    pass

# What the kernel never shows of the options a mount was asked for (Salt's lists).
INVISIBLE_OPTIONS = [
    "_netdev",
    "actimeo",
    "bg",
    "comment",
    "defaults",
    "delay_connect",
    "direct-io-mode",
    "intr",
    "loop",
    "nointr",
    "nobootwait",
    "nofail",
    "password",
    "reconnect",
    "retry",
    "soft",
    "auto",
    "users",
    "bind",
    "nonempty",
    "transform_symlinks",
    "port",
    "backup-volfile-servers",
]
INVISIBLE_KEYS = ["actimeo", "comment", "credentials", "direct-io-mode", "password", "port", "retry", "secretfile"]
IGNORE_FS_KEYS = {"ramfs": ["size"]}
TRANSLATE = {"tcp": "proto=tcp", "udp": "proto=udp"}
_SIZE = re.compile(r"size=(?P<value>[0-9]+)(?P<unit>k|m|g)")


def _warn_unknown(ret: dict[str, Any], fun: str, kwargs: dict[str, Any]) -> None:
    if unknown := sorted(k for k in kwargs if not str(k).startswith("__")):
        ret.setdefault("warnings", []).append(f"mount.{fun} does not take: {', '.join(unknown)} (ignored)")


def _real_device(
    device: str, opts: list[str], active: dict[str, Any], comp_real_name: str, copy_opts: bool
) -> tuple[str, list[str], list[str], str]:
    """(device as the mount table names it, opts, devices found for a label, error)."""
    found: list[str] = []
    if device.startswith("/"):
        if "bind" in opts and comp_real_name in active:
            current = active[comp_real_name]
            source = device.replace(" ", "\\040")
            local = current["device"].startswith("/")
            while local and source not in active and source not in ("", "/"):
                source = os.path.dirname(source.replace("\\040", " "))
            real = active[source]["device"] if local and source in active else current["device"]
            if source in active:
                if copy_opts:
                    opts = sorted(set(opts + active[source]["opts"] + active[source].get("superopts", [])))
                current["opts"].append("bind")
        else:
            real = os.path.realpath(device)
    elif device.upper().startswith("UUID="):
        real = device.split("=", 1)[1].strip('"').lower()
    elif device.upper().startswith("LABEL="):
        label = device.split("=", 1)[1]
        found = list(_salt("disk.blkid")(token=f"LABEL={label}"))
        if not found:
            return "", opts, [], f"Unable to find device with label {label}."
        real = found[0]
    else:
        real = device
    lvm = re.match(r"^/dev/(?P<vg>[^/]+)/(?P<lv>[^/]+$)", device)
    if lvm:
        mapper = "/dev/mapper/{}-{}".format(*(part.replace("-", "--") for part in lvm.groups()))
        if os.path.exists(mapper):
            real = mapper
    fuse = re.match(r"^\w+\#(?P<device_name>.+)", device)
    if fuse:
        real = fuse.group("device_name")
    return real, opts, found, ""


def mounted(
    name: str,
    device: str,
    fstype: str,
    mkmnt: bool = False,
    opts: Any = "defaults",
    dump: Any = 0,
    pass_num: Any = 0,
    config: str = "/etc/fstab",
    persist: bool = True,
    mount: bool = True,
    user: str | None = None,
    match_on: Any = "auto",
    device_name_regex: list[str] | None = None,
    extra_mount_invisible_options: list[str] | None = None,
    extra_mount_invisible_keys: list[str] | None = None,
    extra_mount_ignore_fs_keys: dict[str, list[str]] | None = None,
    extra_mount_translate_options: dict[str, str] | None = None,
    hidden_opts: Any = None,
    bind_mount_copy_active_opts: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make sure ``device`` is mounted on ``name`` with ``opts`` (and, with ``persist``, in ``config``)."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    for value, what in ((name, "name"), (device, "device"), (fstype, "fstype")):
        if not value:
            return dict(ret, result=False, comment=f"Must provide {what} to mount.mounted")
    _warn_unknown(ret, "mounted", kwargs)
    request = {
        "name": name if name == "/" else name.rstrip("/"),
        "device": str(device),
        "fstype": fstype,
        "opts": opts.split(",") if isinstance(opts, str) else list(opts or []),
        "hidden": hidden_opts.split(",") if isinstance(hidden_opts, str) else list(hidden_opts or []),
        "mkmnt": mkmnt,
        "dump": dump,
        "pass_num": pass_num,
        "config": config,
        "persist": persist,
        "mount": mount,
        "user": user,
        "match_on": match_on,
        "device_name_regex": device_name_regex,
        "extra_mount_invisible_options": extra_mount_invisible_options,
        "extra_mount_invisible_keys": extra_mount_invisible_keys,
        "extra_mount_ignore_fs_keys": extra_mount_ignore_fs_keys,
        "extra_mount_translate_options": extra_mount_translate_options,
        "bind_mount_copy_active_opts": bind_mount_copy_active_opts,
    }
    try:
        return _mounted(ret, request)
    except CommandExecutionError as exc:
        return dict(ret, result=False, comment=str(exc))


def _mounted(ret: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    name, device, fstype, opts, mkmnt, user = a["name"], str(a["device"]), a["fstype"], a["opts"], a["mkmnt"], a["user"]
    test = _testing()
    update_cache = False
    active = _salt("mount.active")(extended=True)
    real_name = os.path.realpath(name)
    comp_real_name = real_name.replace(" ", "\\040")
    real_device, opts, device_list, error = _real_device(
        device, opts, active, comp_real_name, a["bind_mount_copy_active_opts"]
    )
    if error:
        return dict(ret, result=False, comment=error)
    if comp_real_name in active and a["mount"]:
        current = active[comp_real_name]
        current.setdefault("superopts", [])
        device_list.append(current["device"])
        device_list.append(os.path.realpath(device_list[0]))
        for extra in (current.get("alt_device"), current.get("device_uuid"), current.get("device_label")):
            if extra and extra not in device_list:
                device_list.append(extra)
        if opts:
            outcome = _remount_if_needed(ret, a, opts, current, real_name, test)
            if outcome is not None:
                return outcome
            update_cache = True
        if real_device not in device_list:
            ignored = next((d for r in a["device_name_regex"] or [] for d in device_list if re.match(r, d)), None)
            if ignored:
                ret["comment"] = "An umount will not be forced because device matched device_name_regex: " + ignored
            elif test:
                return dict(
                    ret,
                    result=None,
                    comment="An umount would have been forced because devices do not match.  Watched: " + device,
                )
            else:
                note = "Forced unmount because devices don't match. Wanted: " + device
                if real_device != device:
                    note += " (" + real_device + ")"
                ret["changes"]["umount"] = note + ", current: " + ", ".join(device_list)
                _salt("mount.umount")(real_name, user=user)
                active = _salt("mount.active")(extended=True)
                if comp_real_name in active:
                    return dict(ret, result=False, comment="Unable to unmount")
                update_cache = True
        else:
            ret["comment"] = "Target was already mounted"
    if comp_real_name not in active:
        if a["mount"]:
            if test:
                if os.path.exists(name):
                    comment = f"{name} would be mounted"
                elif mkmnt:
                    comment = f"{name} would be created and mounted"
                else:
                    comment = f"{name} does not exist and would not be created"
                return dict(ret, result=None, comment=comment)
            if not os.path.exists(name) and not mkmnt:
                return dict(ret, result=False, comment="Mount directory is not present")
            out = _salt("mount.mount")(name, device, mkmnt, fstype, opts, user=user)
            active = _salt("mount.active")(extended=True)
            update_cache = True
            if isinstance(out, str):
                return dict(ret, result=False, comment=out)
            if comp_real_name in active:
                ret["comment"] = "Target was successfully mounted"
                ret["changes"]["mount"] = True
        elif not os.path.exists(name):
            if test:
                ret["result"] = None
                ret["comment"] = (
                    f"{name} would be created, but not mounted"
                    if mkmnt
                    else f"{name} does not exist and would neither be created nor mounted"
                )
            elif mkmnt:
                _salt("file.mkdir")(name, user=user)
                ret["comment"] = f"{name} was created, not mounted"
            else:
                ret["comment"] = f"{name} not present and not mounted"
        else:
            ret["comment"] = f"{name} would not be mounted" if test else f"{name} not mounted"
    if not a["persist"]:
        return ret
    return _persist(ret, a, opts, real_name, update_cache, test)


def _size_in_k(opt: str) -> str:
    """``size=1m`` -> ``size=1024k`` (the kernel shows sizes in k); other options as they are."""
    found = _SIZE.match(opt)
    if not found:
        return opt
    return "size={}k".format(int(found.group("value")) * {"k": 1, "m": 1024, "g": 1048576}[found.group("unit")])


def _as_id(opt: str) -> str:
    key, _, value = opt.partition("=")
    if key in ("uid", "gid") and value and not re.match("[0-9]+$", value):
        info = _salt("user.info" if key == "uid" else "group.info")(value)
        if info and key in info:
            return f"{key}={info[key]}"
    return opt


def _unshown(a: dict[str, Any], opts: list[str], current: dict[str, Any]) -> list[str]:
    """The wanted options the mount does not show (Salt's rules, compared one by one)."""
    invisible = INVISIBLE_OPTIONS + list(a["extra_mount_invisible_options"] or []) + a["hidden"]
    invisible_keys = INVISIBLE_KEYS + list(a["extra_mount_invisible_keys"] or [])
    ignored = {**IGNORE_FS_KEYS, **(a["extra_mount_ignore_fs_keys"] or {})}.get(a["fstype"], [])
    translate = {**TRANSLATE, **(a["extra_mount_translate_options"] or {})}
    shown = set(current.get("opts", [])) | {_size_in_k(o) for o in current.get("superopts", [])}
    out = []
    for opt in opts:
        opt = translate.get(opt, opt)
        if opt.split("=")[0] in invisible_keys:
            opt = opt.split("=")[0]
        opt = _size_in_k(opt)
        if a["fstype"] == "cifs" and opt.split("=")[0] == "user" and "=" in opt:
            opt = "username=" + opt.split("=", 1)[1]
        if opt.split("=")[0] in ignored:
            opt = opt.split("=")[0]
        opt = _as_id(opt)
        if opt not in shown and opt not in invisible and opt not in ignored and opt not in invisible_keys:
            out.append(opt)
    return out


def _remount_if_needed(
    ret: dict[str, Any], a: dict[str, Any], opts: list[str], current: dict[str, Any], real_name: str, test: bool
) -> dict[str, Any] | None:
    """Remount for options the kernel does not show, or that the mount cache remembers and
    ``opts`` dropped; a result to return at once (test mode, a failure), else None."""
    fstype = a["fstype"]
    wanted = _unshown(a, opts, current)
    cache = _salt("mount.read_mount_cache")(real_name)
    changed = sorted(wanted) if wanted else [o for o in cache.get("opts", []) if o not in opts]
    if not changed:
        return None
    listed = ",".join(changed)
    if test:
        return dict(ret, result=None, comment=f"Remount would be forced because options ({listed}) changed")
    if fstype in ("nfs", "cvfs") or fstype.startswith("fuse"):
        ret["changes"]["umount"] = f"Forced unmount and mount because options ({listed}) changed"
        out = _salt("mount.umount")(real_name)
        if out is not True:
            ret["changes"]["umount"] = (
                "Forced a lazy unmount and mount because the previous unmount failed and because the "
                f"options ({listed}) changed"
            )
            out = _salt("mount.umount")(real_name, lazy=True)
            if out is not True:
                return dict(ret, result=False, comment=f"Unable to unmount {real_name}: {out}.")
        out = _salt("mount.mount")(real_name, a["device"], mkmnt=a["mkmnt"], fstype=fstype, opts=opts)
    else:
        ret["changes"]["umount"] = f"Forced remount because options ({listed}) changed"
        out = _salt("mount.remount")(real_name, a["device"], mkmnt=a["mkmnt"], fstype=fstype, opts=list(opts))
    if out is not True:
        return dict(ret, result=False, comment=str(out))
    return None


def _persist(
    ret: dict[str, Any], a: dict[str, Any], opts: list[str], real_name: str, update_cache: bool, test: bool
) -> dict[str, Any]:
    name, config = a["name"], a["config"]
    args = (name, a["device"], a["fstype"], opts, a["dump"], a["pass_num"], config)
    try:
        out = _salt("mount.set_fstab")(*args, test=test, match_on=a["match_on"])
    except CommandExecutionError as exc:
        if not os.path.isfile(config):
            return dict(ret, result=False, comment=ret["comment"] + ". However, the fstab was not found.")
        return dict(ret, result=False, comment=f"{ret['comment']}. {exc}")
    if test:
        if out == "present":
            return ret
        mounted = "is mounted, but " if a["mount"] else ""
        if out == "new":
            comment = f"{name} {mounted}needs to be written to the fstab in order to be made persistent."
        else:
            comment = (
                f"{name} is mounted, but its fstab entry must be updated."
                if a["mount"]
                else (f"The {name} fstab entry must be updated.")
            )
        return dict(ret, result=None, comment=f"{ret['comment']}. {comment}")
    if update_cache:
        _salt("mount.write_mount_cache")(real_name, a["device"], mkmnt=a["mkmnt"], fstype=a["fstype"], mount_opts=opts)
    if out == "present":
        ret["comment"] += ". Entry already exists in the fstab."
    return _persisted(ret, out)


def _persisted(ret: dict[str, Any], out: str) -> dict[str, Any]:
    """The changes and comment of a new or updated fstab entry (``mounted``, ``swap``)."""
    if out == "new":
        ret["changes"]["persist"] = "new"
        ret["comment"] += ". Added new entry to the fstab."
    elif out == "change":
        ret["changes"]["persist"] = "update"
        ret["comment"] += ". Updated the entry in the fstab."
    return ret


def swap(name: str, persist: bool = True, config: str = "/etc/fstab") -> dict[str, Any]:
    """Make sure swap on ``name`` is on (and, with ``persist``, in ``config``)."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    try:
        on = _salt("mount.swaps")()
        real = name
        if _salt("file.is_link")(name):
            real = _salt("file.readlink")(name)
            if not real.startswith("/"):
                real = f"/dev/{os.path.basename(real)}"
        if real in on:
            ret["comment"] = f"Swap {name} already active"
        elif _testing():
            ret.update(result=None, comment=f"Swap {name} is set to be activated")
        else:
            _salt("mount.swapon")(real)
            on = _salt("mount.swaps")()
            if real in on:
                ret.update(comment=f"Swap {name} activated", changes=dict(on[real]))
            else:
                ret.update(result=False, comment=f"Swap {name} failed to activate")
        if not persist:
            return ret
        table = _salt("mount.fstab")(config)
        if _testing():
            if name not in table and name not in [e["device"] for e in table.values()]:
                ret["result"] = None
                if name in on:
                    ret["comment"] = f"Swap {name} is set to be added to the fstab and to be activated"
            return ret
        if "none" in table and table["none"]["device"] == name and table["none"]["fstype"] != "swap":
            return ret
        out = _salt("mount.set_fstab")("none", name, "swap", ["defaults"], 0, 0, config)
    except CommandExecutionError as exc:
        if persist and not os.path.isfile(config):
            return dict(ret, result=False, comment=ret["comment"] + ". However, the fstab was not found.")
        return dict(ret, result=False, comment=str(exc))
    return _persisted(ret, out)


def unmounted(
    name: str,
    device: str | None = None,
    config: str = "/etc/fstab",
    persist: bool = False,
    user: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make sure nothing is mounted on ``name`` (with ``persist``, and no entry in ``config``)."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if not name:
        return dict(ret, result=False, comment="Must provide name to mount.unmounted")
    _warn_unknown(ret, "unmounted", kwargs)
    try:
        active = _salt("mount.active")(extended=True)
        if name.replace(" ", "\\040") not in active:
            ret["comment"] = "Target was already unmounted"
        else:
            if _testing():
                return dict(ret, result=None, comment=f"Mount point {name} is mounted but should not be")
            out = _salt("mount.umount")(name, device, user=user) if device else _salt("mount.umount")(name, user=user)
            if isinstance(out, str):
                ret.update(result=False, comment=out)
            elif out is True:
                ret["comment"] = "Target was successfully unmounted"
                ret["changes"]["umount"] = True
            else:
                ret["comment"] = "Execute set to False, Target was not unmounted"
            _salt("mount.delete_mount_cache")(name)
        if not persist:
            return ret
        table = _salt("mount.fstab")(config)
        if name not in table:
            ret["comment"] += ". fstab entry not found"
            return ret
        if device and table[name]["device"] != device:
            ret["comment"] += f". fstab entry for device {device} not found"
            return ret
        if _testing():
            return dict(
                ret,
                result=None,
                comment=f"Mount point {name} is unmounted but needs to be purged from {config} to be made persistent",
            )
        out = _salt("mount.rm_fstab")(name, device, config)
    except CommandExecutionError as exc:
        return dict(ret, result=False, comment=str(exc))
    if out is not True:
        ret.update(result=False, comment=ret["comment"] + ". Failed to persist purge")
    else:
        ret["comment"] += ". Removed target from fstab"
        ret["changes"]["persist"] = "purged"
    return ret


def mod_watch(name: str, user: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """A ``watch`` on ``mounted``: remount."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if kwargs.get("sfun") != "mounted":
        return dict(ret, comment=f"Watch not supported in {kwargs.get('sfun')} at this time")
    try:
        out = _salt("mount.remount")(
            name, kwargs["device"], False, kwargs["fstype"], kwargs.get("opts", "defaults"), user=user
        )
    except CommandExecutionError as exc:
        out = str(exc)
    if out is True:
        return dict(ret, comment=f"{name} remounted")
    return dict(ret, result=False, comment=f"{name} failed to remount: {out}")


def _convert_to(device: str, convert_to: str | None) -> str | None:
    if (
        not convert_to
        or (convert_to == "device" and device.startswith("/"))
        or device.startswith(f"{convert_to.upper()}=")
    ):
        return device
    found = _salt("disk.blkid")(device) if device.startswith("/") else _salt("disk.blkid")(token=device)
    if len(found) != 1:
        return None
    if convert_to == "device":
        return next(iter(found))
    key = convert_to.upper()
    value = next(iter(found.values())).get(key)
    return f"{key}={value}" if value else None


def fstab_present(
    name: str,
    fs_file: str,
    fs_vfstype: str,
    fs_mntops: str = "defaults",
    fs_freq: Any = 0,
    fs_passno: Any = 0,
    mount_by: str | None = None,
    config: str = "/etc/fstab",
    mount: bool = True,
    match_on: Any = "auto",
    not_change: bool = False,
    fs_mount: bool = True,
) -> dict[str, Any]:
    """Make sure ``config`` has the entry for device ``name`` on ``fs_file`` (mounted when new)."""
    ret: dict[str, Any] = {"name": name, "result": False, "changes": {}, "comment": []}
    if fs_file != "/":
        fs_file = fs_file.rstrip("/")
    spec = _convert_to(name, mount_by)
    if not spec:
        ret["comment"].append(f"Device {name} cannot be converted to {mount_by}")
        return ret
    args = {"name": fs_file, "device": spec, "fstype": fs_vfstype, "opts": fs_mntops, "dump": fs_freq}
    args.update(pass_num=fs_passno, config=config, match_on=match_on, not_change=not_change)
    try:
        out = _salt("mount.set_fstab")(test=_testing(), **args)
    except CommandExecutionError as exc:
        out = str(exc)
    if _testing():
        ret["result"] = None
        if out == "present":
            ret["comment"].append(f"{fs_file} entry is already in {config}.")
        elif out == "new":
            ret["comment"].append(f"{fs_file} entry will be written in {config}.")
            if mount:
                ret["comment"].append(f"Will mount {name} on {fs_file}")
        elif out == "change":
            ret["comment"].append(f"{fs_file} entry will be updated in {config}.")
        else:
            ret["result"] = False
            ret["comment"].append(f"{fs_file} entry cannot be created in {config}: {out}.")
        return ret
    ret["result"] = True
    if out == "present":
        ret["comment"].append(f"{fs_file} entry was already in {config}.")
    elif out == "new":
        ret["changes"]["persist"] = out
        ret["comment"].append(f"{fs_file} entry added in {config}.")
        if mount:
            done = _salt("mount.mount")(fs_file)
            if isinstance(done, str):
                ret["result"] = False
                ret["comment"].append("Error while mounting {}".format(done.split(":", maxsplit=1)[-1]))
            else:
                ret["comment"].append(f"Mounted {name} on {fs_file}")
    elif out == "change":
        ret["changes"]["persist"] = out
        ret["comment"].append(f"{fs_file} entry updated in {config}.")
    else:
        ret["result"] = False
        ret["comment"].append(f"{fs_file} entry cannot be changed in {config}: {out}.")
    return ret


def fstab_absent(name: str, fs_file: str, mount_by: str | None = None, config: str = "/etc/fstab") -> dict[str, Any]:
    """Make sure ``config`` has no entry for ``fs_file``."""
    ret: dict[str, Any] = {"name": name, "result": False, "changes": {}, "comment": []}
    if fs_file != "/":
        fs_file = fs_file.rstrip("/")
    spec = _convert_to(name, mount_by)
    table = _salt("mount.fstab")(config)
    if _testing():
        ret["result"] = None
        verb = "is already missing in" if fs_file not in table else "will be removed from"
        ret["comment"].append(f"{fs_file} entry {verb} {config}.")
        return ret
    if fs_file not in table:
        ret["result"] = True
        ret["comment"].append(f"{fs_file} entry is already missing in {config}.")
        return ret
    try:
        out = _salt("mount.rm_fstab")(name=fs_file, device=spec, config=config)
    except CommandExecutionError:
        out = False
    if out is not True:
        ret["comment"].append(f"{fs_file} entry failed when removing from {config}.")
    else:
        ret["result"] = True
        ret["changes"]["persist"] = "removed"
        ret["comment"].append(f"{fs_file} entry removed from {config}.")
    return ret
