"""The operating-system grains (``os``, ``os_family``, ``osrelease``, ``osfinger``, ...) from
``/etc/os-release``, as Salt 3007 names them: a private part of :mod:`briny.minion.host.grains`."""

from __future__ import annotations

import platform
import re
from typing import Any

from ._grains_rpmos import rpm_os_grains

__all__ = ["os_grains", "read_text"]

# os-release ID -> Salt's ``os`` grain.
_OS_NAME = {
    "debian": "Debian",
    "ubuntu": "Ubuntu",
    "raspbian": "Raspbian",
    "linuxmint": "Mint",
    "pop": "Pop",
    "kali": "Kali",
    "devuan": "Devuan",
    "deepin": "Deepin",
    "elementary": "elementary OS",
    "neon": "neon",
    "trisquel": "Trisquel",
    "centos": "CentOS",
    "rhel": "RedHat",
    "fedora": "Fedora",
    "rocky": "Rocky",
    "almalinux": "AlmaLinux",
    "ol": "OEL",
    "amzn": "Amazon",
    "cloudlinux": "CloudLinux",
    "scientific": "Scientific",
    "virtuozzo": "Virtuozzo",
    "eurolinux": "EuroLinux",
    "photon": "VMware Photon OS",
    "mariner": "CBL-Mariner",
    "azurelinux": "Microsoft Azure Linux",
    "opensuse-leap": "Leap",
    "opensuse-tumbleweed": "openSUSE Tumbleweed",
    "opensuse": "openSUSE",
    "sles": "SUSE",
    "sles_sap": "SUSE",
    "sled": "SUSE",
    "arch": "Arch",
    "archarm": "Arch ARM",
    "manjaro": "Manjaro",
    "endeavouros": "EndeavourOS",
    "alpine": "Alpine",
    "gentoo": "Gentoo",
    "void": "Void",
    "nixos": "NixOS",
    "slackware": "Slackware",
    "clear-linux-os": "Clear",
    "mageia": "Mageia",
    "openeuler": "openEuler",
    "miraclelinux": "MiracleLinux",
    "astra": "AstraLinuxCE",
}

# ``os`` grain -> ``os_family``.
_OS_FAMILY = {
    **{
        name: "Debian"
        for name in (
            "Debian",
            "Ubuntu",
            "Raspbian",
            "Mint",
            "Pop",
            "Kali",
            "Devuan",
            "Deepin",
            "elementary OS",
            "neon",
            "Trisquel",
            "AstraLinuxCE",
        )
    },
    **{
        name: "RedHat"
        for name in (
            "RedHat",
            "CentOS",
            "CentOS Stream",
            "Fedora",
            "Rocky",
            "AlmaLinux",
            "OEL",
            "Amazon",
            "CloudLinux",
            "Scientific",
            "Virtuozzo",
            "EuroLinux",
            "VMware Photon OS",
            "CBL-Mariner",
            "Microsoft Azure Linux",
            "openEuler",
            "MiracleLinux",
        )
    },
    **{name: "Suse" for name in ("SUSE", "openSUSE", "Leap", "openSUSE Tumbleweed")},
    **{name: "Arch" for name in ("Arch", "Arch ARM", "Manjaro", "EndeavourOS")},
    "Alpine": "Alpine",
    "Gentoo": "Gentoo",
    "Void": "Void",
    "NixOS": "NixOS",
    "Slackware": "Slackware",
    "Clear": "Clear",
    "Mageia": "Mageia",
}

_ID_LIKE_FAMILY = {
    "debian": "Debian",
    "ubuntu": "Debian",
    "rhel": "RedHat",
    "fedora": "RedHat",
    "centos": "RedHat",
    "suse": "Suse",
    "opensuse": "Suse",
    "arch": "Arch",
}

# ``uname -m`` -> dpkg architecture (``osarch`` on the Debian family).
_DPKG_ARCH = {
    "x86_64": "amd64",
    "aarch64": "arm64",
    "i686": "i386",
    "i586": "i386",
    "i386": "i386",
    "armv7l": "armhf",
    "armv6l": "armel",
    "ppc64le": "ppc64el",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "mips64": "mips64el",
    "loongarch64": "loong64",
}


def read_text(path: str) -> str:
    """A file's text, or \"\" when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _os_release(root: str = "") -> dict[str, str]:
    text = read_text(f"{root}/etc/os-release") or read_text(f"{root}/usr/lib/os-release")
    data: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, val = line.partition("=")
        val = val.strip()
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
            val = val[1:-1]
        data[key.strip()] = val.replace('\\"', '"')
    return data


def _release_info(release: str) -> list[int | str]:
    info: list[int | str] = []
    for part in release.split("."):
        info.append(int(part) if part.isdigit() else part)
    return info


def os_grains(kernel: str, machine: str, root: str = "") -> dict[str, Any]:
    """The os grains; ``root`` is where ``etc/`` is read from ("" is the host's own)."""
    if kernel != "Linux":
        release = platform.release()
        info = _release_info(release)
        return {
            "os": kernel,
            "os_family": kernel,
            "osfullname": kernel,
            "osrelease": release,
            "osrelease_info": info,
            "oscodename": "",
            "osarch": machine,
            "osmajorrelease": info[0] if info else "",
            "osfinger": f"{kernel}-{info[0] if info else ''}",
        }
    rel = _os_release(root)
    os_id = rel.get("ID", "").lower()
    full = rel.get("NAME", "") or "Linux"
    name = _OS_NAME.get(os_id)
    if os_id == "centos" and "stream" in full.lower():
        name = "CentOS Stream"
    if name is None:
        name = full.split()[0] if full else "Linux"
    family = _OS_FAMILY.get(name)
    if family is None:
        for like in rel.get("ID_LIKE", "").lower().split():
            if like in _ID_LIKE_FAMILY:
                family = _ID_LIKE_FAMILY[like]
                break
        else:
            family = name
    if family in ("RedHat", "Suse"):
        rpm_grains = rpm_os_grains(rel, f"{root}/etc")
        rpm_grains["osarch"] = machine
        return rpm_grains
    release = rel.get("VERSION_ID", "")
    codename = rel.get("VERSION_CODENAME", "")
    if not codename:
        m = re.search(r"\(([^)]+)\)", rel.get("VERSION", ""))
        codename = m.group(1) if m else ""
    grains: dict[str, Any] = {
        "os": name,
        "os_family": family,
        "oscodename": codename,
        "osfullname": full,
        "lsb_distrib_id": full,
        "lsb_distrib_release": release,
        "lsb_distrib_codename": codename,
        "osrelease": release,
    }
    if family == "Debian":
        grains["osarch"] = _DPKG_ARCH.get(machine, machine)
    else:
        grains["osarch"] = machine
    if release:
        info = _release_info(release)
        grains["osrelease_info"] = info
        grains["osmajorrelease"] = info[0]
        finger_name = name if name in ("Debian", "Raspbian") else full
        finger_ver = release if finger_name == "Ubuntu" else info[0]
        grains["osfinger"] = f"{finger_name}-{finger_ver}"
    return grains
