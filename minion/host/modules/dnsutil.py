"""Execution module ``dnsutil``: Salt 3007's generic DNS helpers.

Runs on the managed host (it reads and writes the host's files, and asks
DNS), so none of it is pure. The answers are Salt's, recorded from the
reference (``tests/golden/functions``):

- ``serial(zone, update)``: a zone serial ``YYYYMMDDnn`` kept in the grain
  ``dnsserial_<zone>`` (``dnsserial`` with no zone), which ``update=True``
  stores with ``grains.setval`` (so it persists in the minion's grains
  file): today's ``...01`` when the stored one is older, the stored one plus
  one otherwise. Without ``update`` nothing is stored.
- ``parse_hosts`` / ``hosts_append`` / ``hosts_remove``: a hosts file read
  as lines (``{ip: [names]}``; the words after a trailing ``#`` count as
  names, as in Salt). ``hosts_append`` appends ``\\n<ip> <names>`` (the names
  not there yet); ``hosts_remove`` rewrites the file without the names, drops
  a line left with only its address and keeps comments and blank lines. The
  whole-entry editing of the ``hosts`` module and ``host`` states is
  :mod:`briny.minion.host.modules.hosts`; these are Salt's simpler line tools.
- ``parse_zone``: a BIND zone file (or ``zone=`` text) into Salt's dict.
- ``check_ip``, ``A``, ``AAAA``, ``MX``, ``NS``, ``SPF``: the ``dig`` module's
  functions when ``dig`` is installed; without it ``A``/``AAAA`` ask the
  host's resolver (``/etc/hosts`` included) when no ``nameserver`` is named,
  and the rest answer Salt's "This function requires dig, which is not
  currently available".

Deliberate differences: a call Salt answers with a traceback (``hosts_append``
or ``hosts_remove`` without ``entries``, ``hosts_remove`` on a missing file)
fails with a clear error instead.
"""

from __future__ import annotations

import shutil
import socket
import time
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

_NO_DIG = "This function requires dig, which is not currently available"
_WEEK = 604800


def _has_dig() -> bool:
    return shutil.which("dig") is not None


# ---------------------------------------------------------------- hosts files


def _hosts_dict(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        words = line.split()
        found.setdefault(words[0], []).extend(words[1:])
    return found


def parse_hosts(hostsfile: str = "/etc/hosts", hosts: str | None = None, **kwargs: Any) -> Any:
    """``{address: [names]}`` of a hosts file (or of the ``hosts`` text)."""
    if not hosts:
        try:
            with open(hostsfile, encoding="utf-8", errors="surrogateescape") as fh:
                hosts = fh.read()
        except (OSError, TypeError):
            return "Error: hosts data was not found"
    return _hosts_dict(hosts)


def _entries(entries: Any, fun: str) -> list[str]:
    if entries is None or entries == "":
        raise SaltInvocationError(f"dnsutil.{fun} needs entries: the host names, comma-separated")
    if isinstance(entries, (list, tuple)):
        return [str(e) for e in entries]
    return str(entries).split(",")


def hosts_append(hostsfile: str = "/etc/hosts", ip_addr: str | None = None, entries: Any = None, **kwargs: Any) -> str:
    """Append one line ``ip_addr names...`` to ``hostsfile`` with the names it lacks for that address."""
    names = _entries(entries, "hosts_append")
    if ip_addr is None:
        raise SaltInvocationError("dnsutil.hosts_append needs ip_addr")
    known = parse_hosts(hostsfile=hostsfile)
    have = known.get(str(ip_addr), []) if isinstance(known, dict) else []
    new = [n for n in names if n not in have]
    if not new:
        return f"No additional hosts were added to {hostsfile}"
    line = f"\n{ip_addr} {' '.join(new)}"
    try:
        with open(hostsfile, "a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError as exc:
        raise CommandExecutionError(f"Unable to append to {hostsfile}: {exc.strerror or exc}") from None
    return f"The following line was added to {hostsfile}:{line}"


def hosts_remove(hostsfile: str = "/etc/hosts", entries: Any = None, **kwargs: Any) -> None:
    """Remove the names from every line of ``hostsfile``; a line left with only its address goes."""
    names = set(_entries(entries, "hosts_remove"))
    try:
        with open(hostsfile, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
    except OSError as exc:
        raise CommandExecutionError(f"Unable to read {hostsfile}: {exc.strerror or exc}") from None
    out = []
    for line in text.splitlines():
        if not line or line.strip().startswith("#"):
            out.append(line + "\n")
            continue
        words = line.split()
        kept = words[:1] + [w for w in words[1:] if w not in names]
        if len(kept) > 1:
            out.append(" ".join(kept) + "\n")
    try:
        with open(hostsfile, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write("".join(out))
    except OSError as exc:
        raise CommandExecutionError(f"Unable to write {hostsfile}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------- zone files


def _seconds(text: str) -> int:
    """A SOA time in seconds (``H``/``D`` suffixes; a week at most, and for ``W`` or anything unreadable)."""
    upper = text.upper()
    units = {"H": 3600, "D": 86400}
    for unit, size in units.items():
        if unit in upper:
            try:
                return min(int(upper.replace(unit, "")) * size, _WEEK)
            except ValueError:
                return _WEEK
    if "W" in upper:
        return _WEEK
    try:
        return min(int(upper), _WEEK)
    except ValueError:
        return _WEEK


def _zone_lines(zone: str) -> list[str]:
    """The zone's logical lines: comments cut, blank lines gone, a parenthesised record joined
    on one line; ``$`` directives kept whole."""
    lines: list[str] = []
    pending: str | None = None
    for raw in zone.splitlines():
        line = raw.split(";")[0].strip()
        if not line:
            continue
        if line.startswith("$"):
            lines.append(line)
            continue
        if pending is None and "(" in line and ")" not in line:
            pending = ""
        if pending is not None:
            pending += f" {line}"
            if ")" not in line:
                continue
            line, pending = pending.replace("(", "").replace(")", ""), None
        lines.append(line)
    return lines


def parse_zone(zonefile: str | None = None, zone: str | None = None, **kwargs: Any) -> Any:
    """A zone file (or the ``zone`` text) as Salt's dict: ``$`` directives, the SOA's fields,
    ``NS`` and ``MX`` lists and ``{name: target}`` per other record type."""
    if zonefile:
        try:
            with open(zonefile, encoding="utf-8", errors="surrogateescape") as fh:
                zone = fh.read()
        except OSError:
            pass
    if not zone:
        return "Error: Zone data was not found"
    parsed: dict[str, Any] = {}
    for line in _zone_lines(zone):
        if line.startswith("$"):
            words = line.split()
            parsed[words[0].replace("$", "")] = words[1] if len(words) > 1 else ""
            continue
        origin = parsed.get("ORIGIN")
        words = (line.replace("@", origin) if origin else line).split()
        if "SOA" in line:
            _soa(parsed, words)
            continue
        _record(parsed, line, words)
    return parsed


def _soa(parsed: dict[str, Any], words: list[str]) -> None:
    if len(words) > 1 and words[1] != "IN":
        words.pop(1)
    if len(words) < 10:
        raise CommandExecutionError(f"The SOA record is incomplete: {' '.join(words)}")
    parsed.update(
        ORIGIN=words[0],
        NETWORK=words[1],
        SOURCE=words[3],
        CONTACT=words[4].replace(".", "@", 1),
        SERIAL=words[5],
        REFRESH=_seconds(words[6]),
        RETRY=_seconds(words[7]),
        EXPIRE=_seconds(words[8]),
        MINTTL=_seconds(words[9]),
    )


def _record(parsed: dict[str, Any], line: str, words: list[str]) -> None:
    if words[0] == "IN":
        words.insert(0, parsed.get("ORIGIN", ""))
    if not words[0].endswith(".") and "NS" not in line:
        words[0] = f"{words[0]}.{parsed.get('ORIGIN', '')}"
    if len(words) < 4:
        raise CommandExecutionError(f"Unable to parse the zone record: {line}")
    name, rtype = words[0], words[2]
    if rtype == "NS":
        parsed.setdefault("NS", []).append(words[3])
    elif rtype == "MX":
        if "MX" not in parsed and len(words) > 4:  # Salt keeps the first MX record only
            parsed["MX"] = [{"priority": words[3], "host": words[4]}]
    elif words[3] in ("A", "AAAA") and len(words) > 4:  # with a TTL: name TTL IN A address
        parsed.setdefault(words[3], {})[name] = {"TARGET": words[4], "TTL": words[1]}
    else:
        parsed.setdefault(rtype, {})[name] = words[3]


# ---------------------------------------------------------------- serials


def serial(zone: str = "", update: bool = False, **kwargs: Any) -> str:
    """The zone's serial (``YYYYMMDDnn``) from the grain ``dnsserial_<zone>``, today's ``...01``
    when none is stored; ``update=True`` stores the next one and returns it."""
    key = f"dnsserial_{zone}" if zone else "dnsserial"
    stored = __salt__["grains.get"](key)
    today = time.strftime("%Y%m%d01")
    if not update:
        return str(stored or today)
    if stored and str(stored) >= today:
        try:
            current = str(int(stored) + 1)
        except ValueError:
            raise CommandExecutionError(f"The grain {key} holds {stored!r}, not a serial number") from None
    else:
        current = today
    __salt__["grains.setval"](key, current)
    return current


# ---------------------------------------------------------------- lookups


def check_ip(ip_addr: Any, **kwargs: Any) -> Any:
    """Whether ``ip_addr`` is an IP address or network (``dig.check_ip``; needs ``dig``, as Salt's)."""
    if _has_dig():
        return __salt__["dig.check_ip"](ip_addr)
    return _NO_DIG


def _resolve(host: str, family: socket.AddressFamily) -> Any:
    try:
        infos = socket.getaddrinfo(host, None, family, 0, socket.SOCK_RAW)
    except (socket.gaierror, UnicodeError):
        return f"Unable to resolve {host}"
    return [str(info[4][0]) for info in infos]


def A(host: str, nameserver: str | None = None, **kwargs: Any) -> Any:
    """The A records of ``host`` (``dig.A``; without dig, the host's resolver)."""
    if _has_dig():
        return __salt__["dig.A"](host, nameserver)
    if nameserver is None:
        return _resolve(host, socket.AF_INET)
    return _NO_DIG


def AAAA(host: str, nameserver: str | None = None, **kwargs: Any) -> Any:
    """The AAAA records of ``host`` (``dig.AAAA``; without dig, the host's resolver)."""
    if _has_dig():
        return __salt__["dig.AAAA"](host, nameserver)
    if nameserver is None:
        return _resolve(host, socket.AF_INET6)
    return _NO_DIG


def NS(domain: str, resolve: bool = True, nameserver: str | None = None, **kwargs: Any) -> Any:
    """The name servers of ``domain`` (their addresses unless ``resolve=False``): ``dig.NS``."""
    if _has_dig():
        return __salt__["dig.NS"](domain, resolve, nameserver)
    return _NO_DIG


def SPF(domain: str, record: str = "SPF", nameserver: str | None = None, **kwargs: Any) -> Any:
    """The address ranges of ``domain``'s SPF record: ``dig.SPF``."""
    if _has_dig():
        return __salt__["dig.SPF"](domain, record, nameserver)
    return _NO_DIG


def MX(domain: str, resolve: bool = False, nameserver: str | None = None, **kwargs: Any) -> Any:
    """``[[priority, host], ...]`` of ``domain`` (``resolve``: the host's first address): ``dig.MX``."""
    if _has_dig():
        return __salt__["dig.MX"](domain, resolve, nameserver)
    return _NO_DIG
