"""Salt 3007's names for RHEL-family and SUSE systems: the ``os`` grain derived from an
os-release ``NAME`` and the ``os_family`` of an ``os`` (a private part of
:mod:`briny.minion.host.grains`)."""

from __future__ import annotations

import re

__all__ = ["derive_os_name", "family_of_os"]

# " Linux" / " GNU/Linux" dropped from a NAME before it is shortened.
_LINUX_WORD = re.compile(r"\W(?:gnu/)?linux", re.IGNORECASE)

# First ten characters of a NAME (spaces removed, lowercased) -> ``os``; any other NAME is
# its own ``os`` (with " Linux" dropped).
_SHORT_NAME = {
    "redhatente": "RedHat",
    "fedoraremi": "Fedora",
    "pidora": "Fedora",
    "amazonami": "Amazon",
    "enterprise": "OEL",
    "oracleserv": "OEL",
    "cloudserve": "CloudLinux",
    "cloudlinux": "CloudLinux",
    "almalinux": "AlmaLinux",
    "scientific": "ScientificLinux",
    "sles": "SUSE",
    "slesexpand": "RES",
    "rocky": "Rocky",
    "alibabaclo": "Alinux",
    "photon": "VMware Photon OS",
    "alt": "ALT",
    "chapeau": "Chapeau",
    "korora": "Korora",
}

_FAMILY = {
    **{
        name: "RedHat"
        for name in (
            "Fedora",
            "Chapeau",
            "Korora",
            "FedBerry",
            "CentOS",
            "CentOS Stream",
            "GoOSe",
            "Scientific",
            "ScientificLinux",
            "Amazon",
            "CloudLinux",
            "AlmaLinux",
            "OVS",
            "OEL",
            "XCP",
            "XCP-ng",
            "XenServer",
            "RES",
            "Sangoma",
            "VMware Photon OS",
            "AlterOS",
            "RED OS",
            "ALT",
            "Rocky",
            "Alinux",
        )
    },
    **{
        name: "Suse"
        for name in (
            "SLES",
            "SUSE Enterprise Server",
            "SLED",
            "openSUSE",
            "SUSE",
            "openSUSE Leap",
            "openSUSE Tumbleweed",
            "SLES_SAP",
            "alfaLinux",
            "alfaLinux Rise",
        )
    },
}


def derive_os_name(fullname: str) -> str:
    """The ``os`` grain Salt derives from an os-release ``NAME``."""
    name = _LINUX_WORD.sub("", fullname).strip()
    return _SHORT_NAME.get(name.replace(" ", "").lower()[:10], name)


def family_of_os(os_name: str) -> str:
    """The ``os_family`` of an ``os`` grain (the name itself when Salt knows no family)."""
    return _FAMILY.get(os_name, os_name)
