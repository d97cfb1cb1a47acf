"""Execution module ``dig``: DNS lookups through the ``dig`` command (Salt 3007's answers).

Runs on the managed host (it asks the host's resolver, or ``nameserver``),
so none of these is pure. Loaded only where ``dig`` is installed (Debian's
``bind9-dnsutils``), as Salt's module is; elsewhere ``dig.A`` is "not
available", in Salt's words.

Every lookup runs ``dig +short NAME TYPE [@nameserver]``. When ``dig`` fails
(no resolver reachable, exit code 9; a bad name, ...), each returns what
Salt returns then: an empty list, after a warning naming the exit code.
``A`` / ``AAAA`` keep only the lines that are addresses (``check_ip``);
``NS`` resolves the servers' addresses unless ``resolve=False``; ``MX``
gives ``[[priority, host], ...]`` (with ``resolve``, the host's first
address); ``SPF`` follows ``include:`` and ``redirect=`` and falls back to
the TXT record; ``CNAME`` returns dig's text; ``PTR`` and ``TXT`` the lines.
Lower-case names (``dig.a``, ``dig.mx``, ...) are aliases, as in Salt.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

log = logging.getLogger(__name__)

__virtualname__ = "dig"


def __virtual__() -> Any:
    if shutil.which("dig"):
        return __virtualname__
    return False, "The dig execution module cannot be loaded: the dig binary is not in the path."


def check_ip(addr: Any, **kwargs: Any) -> bool:
    """Whether ``addr`` is an IPv4 (``/1``-``/32``) or IPv6 (``/8``-``/128``) address or network."""
    if not isinstance(addr, str):
        return False
    host, slash, bits = addr.rpartition("/") if "/" in addr else (addr, "", "")
    for version, low, high in ((4, 1, 32), (6, 8, 128)):
        try:
            if ipaddress.ip_address(host).version != version:
                continue
        except ValueError:
            continue
        if not slash:
            return True
        try:
            return low <= int(bits) <= high
        except ValueError:
            return False
    return False


def _dig(name: Any, rtype: str | None, nameserver: str | None, *extra: str) -> str | None:
    """dig's output, or None (after Salt's warning) when it failed."""
    cmd = ["dig", "+short", *extra, str(name)] + ([rtype] if rtype else [])
    if nameserver is not None:
        cmd.append(f"@{nameserver}")
    res = __salt__["cmd.run_all"](cmd, python_shell=False)
    if res["retcode"] != 0:
        log.warning("dig returned exit code '%s'. Returning empty list as fallback.", res["retcode"])
        return None
    return str(res["stdout"])


def A(host: str, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """The A records (IPv4 addresses) of ``host``."""
    out = _dig(host, "A", nameserver)
    return [] if out is None else [x for x in out.split("\n") if check_ip(x)]


def AAAA(host: str, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """The AAAA records (IPv6 addresses) of ``host``."""
    out = _dig(host, "AAAA", nameserver)
    return [] if out is None else [x for x in out.split("\n") if check_ip(x)]


def PTR(host: str, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """The PTR records (names) of the address ``host``."""
    out = _dig(host, None, nameserver, "-x")
    return [] if out is None else out.split("\n")


def CNAME(host: str, nameserver: str | None = None, **kwargs: Any) -> Any:
    """The CNAME of ``host`` (dig's text)."""
    out = _dig(host, "CNAME", nameserver)
    return [] if out is None else out


def NS(domain: str, resolve: bool = True, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """The name servers of ``domain``: their addresses, or with ``resolve=False`` their names."""
    out = _dig(domain, "NS", nameserver)
    if out is None:
        return []
    if not resolve:
        return out.split("\n")
    return [ip for name in out.split("\n") for ip in A(name, nameserver)]


_SPF = re.compile(r"(?:\+|~)?(ip[46]|include):(.+)")


def SPF(domain: str, record: str = "SPF", nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """The address ranges the SPF record of ``domain`` allows (the TXT record when there is no SPF one)."""
    out = _dig(domain, record, nameserver)
    if out is None:
        return []
    if out == "" and record == "SPF":
        return SPF(domain, "TXT", nameserver)
    sections = out.replace('"', "").split()
    if not sections or sections[0] != "v=spf1":
        return []
    if len(sections) > 1 and sections[1].startswith("redirect="):
        return SPF(sections[1][len("redirect=") :], "SPF", nameserver)
    found: list[str] = []
    for section in sections[1:]:
        match = _SPF.match(section)
        if match is None:
            continue
        mechanism, address = match.groups()
        if mechanism == "include":
            found.extend(SPF(address, "SPF", nameserver))
        elif check_ip(address):
            found.append(address)
    return found


def MX(domain: str, resolve: bool = False, nameserver: str | None = None, **kwargs: Any) -> list[list[str]]:
    """``[[priority, host], ...]`` for ``domain`` (``resolve``: each host's first address)."""
    out = _dig(domain, "MX", nameserver)
    if out is None:
        return []
    rows = [line.split() for line in out.split("\n")]
    if resolve:
        return [[row[0], A(row[1], nameserver)[0]] for row in rows]
    return rows


def TXT(host: str, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """The TXT records of ``host``."""
    out = _dig(host, "TXT", nameserver)
    return [] if out is None else out.split("\n")


def a(host: str, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """Alias of :func:`A`."""
    return A(host, nameserver)


def aaaa(host: str, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """Alias of :func:`AAAA`."""
    return AAAA(host, nameserver)


def ptr(host: str, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """Alias of :func:`PTR`."""
    return PTR(host, nameserver)


def cname(host: str, nameserver: str | None = None, **kwargs: Any) -> Any:
    """Alias of :func:`CNAME`."""
    return CNAME(host, nameserver)


def ns(domain: str, resolve: bool = True, nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """Alias of :func:`NS`."""
    return NS(domain, resolve, nameserver)


def spf(domain: str, record: str = "SPF", nameserver: str | None = None, **kwargs: Any) -> list[str]:
    """Alias of :func:`SPF`."""
    return SPF(domain, record, nameserver)


def mx(domain: str, resolve: bool = False, nameserver: str | None = None, **kwargs: Any) -> list[list[str]]:
    """Alias of :func:`MX`."""
    return MX(domain, resolve, nameserver)
