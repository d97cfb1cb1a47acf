"""The operating-system grains of RHEL-family and SUSE hosts, derived from ``/etc/os-release``
(and the ``/etc/*-release`` files) the way Salt 3007's core grains derive them on those hosts: a
private part of :mod:`briny.minion.host.grains`.

Salt takes its "legacy" path there (no ``lsb_release`` Python module): ``lsb_distrib_*`` come
from os-release (``NAME``, ``VERSION_ID``, ``VERSION_CODENAME`` or else ``PRETTY_NAME``), a SUSE
``CPE_NAME`` renames ``os`` to ``SUSE`` (and openSUSE's ``osfullname`` / release), and
``os_family`` is looked up from ``os``. tests/golden/grains/ holds what the reference reports
for real os-release files of each distribution.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ._grains_os_names import derive_os_name, family_of_os

__all__ = ["rpm_os_grains", "release_info"]

_ETC = "/etc"
# /etc/*-release files that are not a distribution's own release file (as the distro library
# skips them).
_NOT_RELEASE_FILES = frozenset(
    {
        "os-release",
        "lsb-release",
        "system-release",
        "plesk-release",
        "iredmail-release",
        "board-release",
        "ec2_version",
        "debian_version",
    }
)
_VERSION_CODENAME = re.compile(r"\((\D+)\)|,\s*(\D+)")
_RELEASE_FILE_LINE = re.compile(r"release\s+(?P<version>\d[\w.]*)\s*(?:\((?P<codename>[^)]*)\))?")


def release_info(release: str) -> list[int | str]:
    """``osrelease_info``: the dotted parts of ``osrelease``, numbers as ints."""
    return [int(part) if part.isdigit() else part for part in release.split(".")]


def _release_file(etc: str) -> tuple[str, str]:
    """(version, codename) from the distribution's ``/etc/NAME-release`` file, "" when none."""
    try:
        names = sorted(os.listdir(etc))
    except OSError:
        return "", ""
    for name in names:
        if not re.fullmatch(r"\w+[-_](release|version)", name) or name in _NOT_RELEASE_FILES:
            continue
        try:
            with open(os.path.join(etc, name), encoding="utf-8", errors="replace") as fh:
                line = fh.readline()
        except OSError:
            continue
        m = _RELEASE_FILE_LINE.search(line)
        if m:
            return m.group("version"), (m.group("codename") or "").strip()
    return "", ""


def _os_release_codename(rel: dict[str, str]) -> str | None:
    """The codename the distro library reads from os-release (None when it has none)."""
    if "VERSION_CODENAME" in rel:
        return rel["VERSION_CODENAME"]
    if "UBUNTU_CODENAME" in rel:
        return rel["UBUNTU_CODENAME"]
    m = _VERSION_CODENAME.search(rel.get("VERSION", ""))
    return (m.group(1) or m.group(2)) if m else None


def _cpe(cpe_name: str) -> dict[str, str | None]:
    """vendor and version of an os-release ``CPE_NAME`` (URI or 2.3 form), {} when malformed."""
    parts = cpe_name.split(":")
    if len(parts) <= 4 or parts[0] != "cpe":
        return {}
    if parts[1].startswith("/"):
        return {"vendor": parts[2], "version": parts[4]}
    if parts[1] == "2.3" and (len(parts) == 6 or 7 < len(parts) <= 13):
        vendor, version = parts[3], parts[5]
        return {"vendor": None if vendor == "*" else vendor, "version": None if version == "*" else version}
    return {}


def rpm_os_grains(rel: dict[str, str], etc: str = _ETC) -> dict[str, Any]:
    """``os``, ``os_family``, ``osfullname``, ``osrelease(_info)``, ``osmajorrelease``,
    ``osfinger``, ``oscodename`` and ``lsb_distrib_*`` of a RHEL-family or SUSE host whose
    os-release holds ``rel``."""
    name = rel.get("NAME", "Linux")
    grains: dict[str, Any] = {"os": derive_os_name(name), "osfullname": name.strip()}
    grains["lsb_distrib_id"] = name.strip()
    if "VERSION_ID" in rel:
        grains["lsb_distrib_release"] = rel["VERSION_ID"]
    if "VERSION_CODENAME" in rel:
        grains["lsb_distrib_codename"] = rel["VERSION_CODENAME"]
    elif "PRETTY_NAME" in rel:
        grains["lsb_distrib_codename"] = rel["PRETTY_NAME"]
    cpe = _cpe(rel.get("CPE_NAME", ""))
    if (cpe.get("vendor") or "").lower() in ("suse", "opensuse"):
        grains["os"] = "SUSE"
        if rel.get("NAME") == "openSUSE Leap":
            grains["osfullname"] = "Leap"
        elif rel.get("VERSION") == "Tumbleweed":
            grains["osfullname"] = rel["VERSION"]
        if cpe.get("version") and cpe.get("vendor") == "opensuse":
            grains["lsb_distrib_release"] = cpe["version"]
    file_version, file_codename = _release_file(etc)
    distro_version = rel.get("VERSION_ID") or file_version
    distro_codename = _os_release_codename(rel)
    if distro_codename is None:
        distro_codename = file_codename
    grains["osrelease"] = grains.get("lsb_distrib_release", distro_version).strip()
    codename = grains.get("lsb_distrib_codename", "")
    if codename and grains["os"] in ("Rocky", "AlmaLinux") and "(" in codename:
        codename = codename.split("(", 1)[1].split(")", 1)[0]
        grains["lsb_distrib_codename"] = codename
    grains["oscodename"] = codename.strip() or distro_codename
    if "Red Hat" in grains["oscodename"]:
        grains["oscodename"] = distro_codename
    grains["os_family"] = family_of_os(grains["os"])
    if grains["osrelease"]:
        info = release_info(grains["osrelease"])
        grains["osrelease_info"] = info
        if isinstance(info[0], int):
            grains["osmajorrelease"] = info[0]
        grains["osfinger"] = f"{grains['osfullname']}-{info[0]}"
    return grains
