"""Execution module ``lowpkg`` on the RHEL family and SUSE: rpm's own queries.

Loads where Salt 3007's rpm_lowpkg does (``os_family`` RedHat or Suse, or an ``os`` such as
Amazon, with ``rpm`` on PATH). ``list_pkgs`` is ``{name: version}`` (the version without its
release, as Salt), ``verify`` the files rpm finds changed (``{path: {"mismatch": [...]}}``),
``file_list`` ``{"errors": [], "files": [...]}``, ``owner`` the package owning a path (``""``
when none), ``info`` rpm's header fields (``attr`` picks some). ``root`` queries another root.
"""

from __future__ import annotations

import datetime
import shutil
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from . import _rpm_db as rpmdb

if TYPE_CHECKING:
    from briny.common.dunders import __grains__

__virtualname__ = "lowpkg"
__all__ = ["file_list", "info", "list_pkgs", "owner", "verify", "version_cmp"]

_ENABLED_OS = ("amazon", "xcp", "xenserver", "virtuozzolinux", "virtuozzo", "issabel pbx", "openeuler")
_FTYPES = {"c": "config", "d": "doc", "g": "ghost", "l": "license", "r": "readme"}
_MISMATCH = (
    "size",
    "mode",
    "md5sum",
    "device major/minor number",
    "readlink path",
    "user",
    "group",
    "mtime",
    "capabilities",
)
_MISMATCH_FLAGS = "SM5DLUGTP"
_SEP = "\x1e"
# attribute -> rpm query tag (rpm's conditional formats where a tag may be missing)
_INFO_TAGS = {
    "name": "%{NAME}",
    "relocations": "%|PREFIXES?{[%{PREFIXES} ]}:{(not relocatable)}|",
    "version": "%{VERSION}",
    "vendor": "%{VENDOR}",
    "release": "%{RELEASE}",
    "epoch": "%|EPOCH?{%{EPOCH}}|",
    "build_date_time_t": "%{BUILDTIME}",
    "build_date": "%{BUILDTIME}",
    "install_date_time_t": "%|INSTALLTIME?{%{INSTALLTIME}}:{(not installed)}|",
    "install_date": "%|INSTALLTIME?{%{INSTALLTIME}}:{(not installed)}|",
    "build_host": "%{BUILDHOST}",
    "group": "%{GROUP}",
    "source_rpm": "%{SOURCERPM}",
    "size": "%{LONGSIZE}",
    "arch": "%{ARCH}",
    "license": "%|LICENSE?{%{LICENSE}}|",
    "signature": "%|DSAHEADER?{%{DSAHEADER:pgpsig}}:{%|RSAHEADER?{%{RSAHEADER:pgpsig}}:{(none)}|}|",
    "packager": "%|PACKAGER?{%{PACKAGER}}|",
    "url": "%|URL?{%{URL}}|",
    "summary": "%{SUMMARY}",
    "edition": "%|EPOCH?{%{EPOCH}:}|%{VERSION}-%{RELEASE}",
    "description": "%{DESCRIPTION}",
}


def __virtual__() -> Any:
    if not shutil.which("rpm"):
        return (False, "The rpm execution module failed to load: rpm binary is not in the path.")
    os_grain = str(__grains__.get("os") or "").lower()
    family = str(__grains__.get("os_family") or "").lower()
    if family in ("redhat", "suse") or os_grain in _ENABLED_OS:
        return __virtualname__
    return (
        False,
        "The rpm execution module failed to load: only available on redhat/centos/fedora/suse based systems.",
    )


def _rpm(kwargs: dict[str, Any], *args: str) -> list[str]:
    root = kwargs.get("root")
    return ["rpm", *(["--root", str(root)] if root else []), *args]


def list_pkgs(*packages: str, **kwargs: Any) -> dict[str, str]:
    """``{name: version}`` of the installed packages (or of those named that are)."""
    out = rpmdb._run(_rpm(kwargs, "-q" if packages else "-qa", "--queryformat", "%{NAME} %{VERSION}\\n", *packages))
    pkgs: dict[str, str] = {}
    for line in str(out["stdout"]).splitlines():
        parts = line.split()
        if "is not installed" in line or len(parts) != 2:
            continue
        pkgs[parts[0]] = parts[1]
    return pkgs


def _split_arg(value: Any, what: str) -> list[str]:
    if value is None or value == []:
        return []
    if isinstance(value, list):
        return [str(x).strip() for x in value]
    if isinstance(value, str):
        return [x.strip() for x in value.split(",") if x.strip()]
    raise SaltInvocationError(f"{what} must be a list or a comma-separated string")


def verify(*packages: str, **kwargs: Any) -> dict[str, Any]:
    """The files of the packages (or of every package) that differ from rpm's record."""
    ignore = _split_arg(kwargs.get("ignore_types"), "ignore_types")
    options = _split_arg(kwargs.get("verify_options"), "verify_options")
    cmd = _rpm(kwargs, *(f"--{o}" for o in options), *(["-V", *packages] if packages else ["-Va"]))
    out = rpmdb._run(cmd)
    if not str(out["stdout"]).strip() and out["retcode"] != 0:
        raise CommandExecutionError("Failed to verify package(s)" + (f": {out['stderr']}" if out.get("stderr") else ""))
    ret: dict[str, Any] = {}
    for line in str(out["stdout"]).splitlines():
        entry: dict[str, Any] = {"mismatch": []}
        if "missing" in line:
            line = " " + line
            entry = {"missing": True}
        ftype = _FTYPES.get(line[11:12])
        if ftype:
            entry["type"] = ftype
        if ftype in ignore:
            continue
        if "mismatch" in entry:
            entry["mismatch"] = [
                m
                for flag, m in zip(_MISMATCH_FLAGS, _MISMATCH, strict=True)
                if line[_MISMATCH_FLAGS.index(flag)] == flag
            ]
        ret[line[13:]] = entry
    return ret


def file_list(*packages: str, **kwargs: Any) -> dict[str, Any]:
    """The files of the packages (every package's when none is named)."""
    out = rpmdb._run(_rpm(kwargs, "-ql" if packages else "-qla", *packages))
    return {"errors": [], "files": str(out["stdout"]).splitlines()}


def owner(*paths: str, **kwargs: Any) -> Any:
    """The package owning each path (``""`` when none); a dict for several paths."""
    if not paths:
        return ""
    ret: dict[str, str] = {}
    for path in paths:
        out = rpmdb._run(_rpm(kwargs, "-qf", "--queryformat", "%{name}", path))
        text = str(out["stdout"])
        ret[path] = "" if "not owned" in text.lower() or out["retcode"] != 0 else text
    return next(iter(ret.values())) if len(ret) == 1 else ret


def version_cmp(ver1: str, ver2: str, ignore_epoch: bool = False) -> int:
    """-1, 0 or 1 in rpm's order."""
    return rpmdb.evr_cmp(str(ver1), str(ver2), ignore_epoch is True)


def info(*packages: str, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """rpm's header of installed packages: ``{name: {"version", "release", "arch", ...}}``;
    ``attr`` (comma-separated) picks the fields (``name`` and ``edition`` always come)."""
    attr = [a.strip() for a in str(kwargs["attr"]).split(",")] if kwargs.get("attr") else None
    if attr:
        keys = [a for a in attr if a in _INFO_TAGS]
        if not [a for a in keys if a != "description"]:
            raise CommandExecutionError("No valid attributes found.")
        keys += [k for k in ("name", "edition") if k not in keys]
    else:
        keys = list(_INFO_TAGS)
    fmt = _SEP.join(f"{k}={_INFO_TAGS[k]}" for k in keys) + "\x1d"
    out = rpmdb._run(_rpm(kwargs, "-q" if packages else "-qa", "--queryformat", fmt, *packages), env={"TZ": "UTC"})
    ret: dict[str, dict[str, Any]] = {}
    for record in str(out["stdout"]).split("\x1d"):
        if "=" not in record:
            continue
        data: dict[str, Any] = {}
        for field in record.split(_SEP):
            key, _, value = field.partition("=")
            key, value = key.strip(), value.strip() if key != "description" else value
            if key in ("build_date", "install_date"):
                if value.isdigit():
                    stamp = datetime.datetime.fromtimestamp(int(value), datetime.timezone.utc)
                    data[key] = stamp.replace(tzinfo=None).isoformat() + "Z"
                continue
            if key in ("build_date_time_t", "install_date_time_t"):
                if value.isdigit():
                    data[key] = int(value)
                continue
            if key == "description" or value:
                data[key] = value
        name = data.get("name")
        if not name:
            continue
        prev = ret.get(name)
        if prev is None or rpmdb.evr_cmp(str(data.get("edition", "")), str(prev.get("edition", ""))) > 0:
            ret[name] = data
    for data in ret.values():
        if not attr or "edition" not in attr:
            data.pop("edition", None)
    return ret
