"""Execution module ``network``: the host's interfaces, addresses and routes (Salt 3007's answers).

Runs on the managed host and reads it (``ip addr show``, ``ip route`` or
``netstat -rn`` as Salt chooses, ``ip neigh``, the resolver), so none of
these is pure: a master-side compile that calls one lets the minion compile
for itself. ``mine_functions`` is how another host's template learns these
values (``mine.get``).

``interfaces()`` is Salt's dict: per interface ``up``, ``hwaddr``,
``inet`` (``address``, ``netmask``, ``broadcast``, ``label``), ``inet6``
(``address``, ``prefixlen`` as text, ``scope``), ``secondary`` (addresses
``ip`` marks secondary, with their ``type``) and ``parent`` (``eth0.5@eth0``).
``ip_addrs`` / ``ip_addrs6`` give the sorted unique addresses, loopback
ones only with ``include_loopback``; ``interface`` is a name, a glob or a
list of them, ``cidr`` keeps those in a network, ``type`` ``public`` or
``private`` (IPv4). An unknown interface name given to ``hw_addr`` /
``interface`` / ``interface_ip`` returns Salt's message (a string), not an
error. ``routes`` parses ``netstat -rn`` when ``netstat`` is installed, else
``ip route``, as Salt does; ``default_route`` keeps the default ones.

Not provided: ``wol``, ``traceroute``, ``mod_hostname``, ``mod_bufsize`` /
``get_bufsize``, ``connect``, ``netstat``, ``active_tcp``, ``get_route``,
``fqdns`` (they are not read by templates; call ``cmd.run`` meanwhile).
"""

from __future__ import annotations

import fnmatch
import ipaddress
import logging
import re
import shutil
import socket
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

log = logging.getLogger(__name__)

_HEAD = re.compile(r"^\d*:\s+([\w.\-]+)(?:@)?([\w.\-]+)?:\s+<(.+)>")


def _ipv4_mask(prefix: int) -> str:
    return str(ipaddress.IPv4Network(f"0.0.0.0/{prefix}").netmask) if 0 <= prefix <= 32 else ""


def parse_ip_addr(text: str) -> dict[str, dict[str, Any]]:
    """Salt's interface dict from the text of ``ip addr show`` (or ``ip link show`` + it)."""
    out: dict[str, dict[str, Any]] = {}
    for group in re.split(r"\r?\n(?=\d)", text):
        name = None
        data: dict[str, Any] = {}
        for line in group.splitlines():
            if " " not in line:
                continue
            head = _HEAD.match(line)
            if head:
                name, parent, flags = head.groups()
                data["up"] = "UP" in flags.split(",")
                if parent:
                    data["parent"] = parent
                continue
            cols = line.split()
            if len(cols) < 2:
                continue
            kind, value = cols[0], cols[1]
            if kind.startswith("link"):
                data["hwaddr"] = value
                continue
            if kind not in ("inet", "inet6"):
                continue
            addr, _, prefix = value.partition("/")
            entry: dict[str, Any] = {}
            secondary = "secondary" in cols
            if secondary:
                entry["type"] = kind
            entry["address"] = addr
            if kind == "inet":
                entry["netmask"] = _ipv4_mask(int(prefix or 32))
                entry["broadcast"] = cols[cols.index("brd") + 1] if "brd" in cols else None
                entry["label"] = cols[-1]
            else:
                entry["prefixlen"] = prefix or 32
                entry["scope"] = cols[cols.index("scope") + 1] if "scope" in cols else None
            data.setdefault("secondary" if secondary else kind, []).append(entry)
        if name:
            out[name] = data
    return out


def interfaces(**kwargs: Any) -> dict[str, dict[str, Any]]:
    """Every interface of the host (see the module docstring for the shape)."""
    if not shutil.which("ip"):
        raise CommandExecutionError("network.interfaces needs the 'ip' command (iproute2)")
    res = __salt__["cmd.run_all"](["ip", "addr", "show"], python_shell=False, output_loglevel="trace")
    return parse_ip_addr(str(res.get("stdout") or ""))


def _iface(iface: str) -> tuple[dict[str, Any] | None, str]:
    info = interfaces()
    if iface in info:
        return info[iface], ""
    msg = 'Interface "{}" not in available interfaces: "{}"'.format(iface, '", "'.join(info))
    log.error(msg)
    return None, msg


def hw_addr(iface: str, **kwargs: Any) -> str:
    """The MAC address of ``iface`` ("" when it has none; Salt's message when it does not exist)."""
    data, error = _iface(iface)
    return error if data is None else str(data.get("hwaddr", ""))


def hwaddr(iface: str, **kwargs: Any) -> str:
    """Alias of :func:`hw_addr`."""
    return hw_addr(iface)


def interface(iface: str, **kwargs: Any) -> Any:
    """The ``inet`` entries of ``iface`` ("" when it has none; Salt's message when it does not exist)."""
    data, error = _iface(iface)
    return error if data is None else data.get("inet", "")


def interface_ip(iface: str, **kwargs: Any) -> str:
    """The first IPv4 address of ``iface`` ("" when it has none)."""
    data, error = _iface(iface)
    if data is None:
        return error
    inet = data.get("inet")
    return str(inet[0].get("address", "")) if inet else ""


def _split(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [p.strip() for p in str(value).split(",")]


def _entries(ifaces: dict[str, dict[str, Any]], proto: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for data in ifaces.values():
        out.extend(data.get(proto, []))
        out.extend(e for e in data.get("secondary", []) if e.get("type") == proto)
    return out


def _selected(interface: Any) -> dict[str, dict[str, Any]]:
    ifaces = interfaces()
    if interface is None:
        return ifaces
    patterns = _split(interface)
    return {k: v for k, v in ifaces.items() if any(fnmatch.fnmatch(k, p) for p in patterns)}


def _addrs(interface: Any, include_loopback: bool, proto: str) -> list[str]:
    found = set()
    for entry in _entries(_selected(interface), proto):
        addr = ipaddress.ip_address(entry["address"])
        if include_loopback or not addr.is_loopback:
            found.add(addr)
    return [str(a) for a in sorted(found)]


def _in_cidr(cidr: Any, addrs: list[str]) -> bool:
    try:
        net = ipaddress.ip_network(cidr)
    except ValueError:
        log.error("Invalid CIDR '%s'", cidr)
        return False
    return any(ipaddress.ip_address(a) in net for a in addrs)


def ip_addrs(
    interface: Any = None,
    include_loopback: bool = False,
    cidr: str | None = None,
    type: str | None = None,
    **kwargs: Any,
) -> list[str]:
    """The host's IPv4 addresses (see the module docstring for the filters)."""
    addrs = _addrs(interface, include_loopback, "inet")
    if cidr:
        return [a for a in addrs if _in_cidr(cidr, [a])]
    if type == "public":
        return [a for a in addrs if not ipaddress.ip_address(a).is_private]
    if type == "private":
        return [a for a in addrs if ipaddress.ip_address(a).is_private]
    return addrs


def ipaddrs(
    interface: Any = None,
    include_loopback: bool = False,
    cidr: str | None = None,
    type: str | None = None,
    **kwargs: Any,
) -> list[str]:
    """Alias of :func:`ip_addrs`."""
    return ip_addrs(interface, include_loopback, cidr, type)


def ip_addrs6(
    interface: Any = None, include_loopback: bool = False, cidr: str | None = None, **kwargs: Any
) -> list[str]:
    """The host's IPv6 addresses (``::1`` only with ``include_loopback``)."""
    addrs = _addrs(interface, include_loopback, "inet6")
    return [a for a in addrs if _in_cidr(cidr, [a])] if cidr else addrs


def ipaddrs6(
    interface: Any = None, include_loopback: bool = False, cidr: str | None = None, **kwargs: Any
) -> list[str]:
    """Alias of :func:`ip_addrs6`."""
    return ip_addrs6(interface, include_loopback, cidr)


def _networks(interface: Any, include_loopback: bool, verbose: bool, proto: str) -> Any:
    nets: dict[Any, dict[str, Any]] = {}
    key = "netmask" if proto == "inet" else "prefixlen"
    for entry in _entries(_selected(interface), proto):
        iface = ipaddress.ip_interface(f"{entry['address']}/{entry.get(key) or (32 if proto == 'inet' else 128)}")
        if iface.is_loopback and not include_loopback:
            continue
        net = iface.network
        nets[net] = {
            "address": str(net.network_address),
            "netmask": str(net.netmask),
            "num_addresses": net.num_addresses,
            "prefixlen": net.prefixlen,
        }
    if verbose:
        return {str(n): nets[n] for n in sorted(nets)}
    return [str(n) for n in sorted(nets)]


def ip_networks(interface: Any = None, include_loopback: bool = False, verbose: bool = False, **kwargs: Any) -> Any:
    """The IPv4 networks the host's addresses are in (``verbose``: with their details)."""
    return _networks(interface, include_loopback, verbose, "inet")


def ip_networks6(interface: Any = None, include_loopback: bool = False, verbose: bool = False, **kwargs: Any) -> Any:
    """The IPv6 networks the host's addresses are in (``verbose``: with their details)."""
    return _networks(interface, include_loopback, verbose, "inet6")


def _subnets(proto: str, only: Any = None) -> list[str]:
    ifaces = interfaces()
    if isinstance(only, list):
        ifaces = {k: v for k, v in ifaces.items() if k in only}
    elif only is not None:
        ifaces = {only: ifaces.get(only, {})}
    key, default = ("netmask", 32) if proto == "inet" else ("prefixlen", 128)
    nets = set()
    for entry in _entries(ifaces, proto):
        iface = ipaddress.ip_interface(f"{entry['address']}/{entry.get(key, default)}")
        if not iface.is_loopback:
            nets.add(iface.network)
    return [str(n) for n in sorted(nets)]


def subnets(interfaces: Any = None, **kwargs: Any) -> list[str]:
    """The IPv4 networks the host belongs to (loopback excluded), of ``interfaces`` if given."""
    return _subnets("inet", interfaces)


def subnets6(**kwargs: Any) -> list[str]:
    """The IPv6 networks the host belongs to (loopback excluded)."""
    return _subnets("inet6")


def in_subnet(cidr: str, **kwargs: Any) -> bool:
    """Whether one of the host's addresses (loopback excluded) is in ``cidr``."""
    return _in_cidr(cidr, _addrs(None, False, "inet") + _addrs(None, False, "inet6"))


def ip_in_subnet(ip_addr: str, cidr: str, **kwargs: Any) -> bool:
    """Whether ``ip_addr`` is in ``cidr``."""
    return _in_cidr(cidr, _split(ip_addr) if isinstance(ip_addr, (list, tuple)) else [ip_addr])


def calc_net(ip_addr: str, netmask: str | None = None, **kwargs: Any) -> str:
    """The network (CIDR) ``ip_addr`` (``a.b.c.d/n``, or with ``netmask``) is in."""
    value = f"{ip_addr}/{netmask}" if netmask is not None else ip_addr
    return str(ipaddress.ip_network(value, strict=False))


def convert_cidr(cidr: str, **kwargs: Any) -> dict[str, str]:
    """``{"network", "netmask", "broadcast"}`` of ``cidr``."""
    net = ipaddress.ip_network(calc_net(cidr))
    return {"network": str(net.network_address), "netmask": str(net.netmask), "broadcast": str(net.broadcast_address)}


def is_private(ip_addr: str, **kwargs: Any) -> bool:
    """Whether ``ip_addr`` is private."""
    return ipaddress.ip_address(ip_addr).is_private


def is_loopback(ip_addr: str, **kwargs: Any) -> bool:
    """Whether ``ip_addr`` is a loopback address."""
    return ipaddress.ip_address(ip_addr).is_loopback


def reverse_ip(ip_addr: str, **kwargs: Any) -> str:
    """The reverse DNS name of ``ip_addr`` (``4.3.2.1.in-addr.arpa``)."""
    return ipaddress.ip_address(ip_addr).reverse_pointer


def iphexval(ip: str, **kwargs: Any) -> str:
    """The IPv4 address as 8 upper-case hex digits."""
    return "".join(f"{int(x):02X}" for x in ip.split("."))


def ifacestartswith(cidr: str, **kwargs: Any) -> list[str]:
    """Labels of the IPv4 addresses that start with the text ``cidr``."""
    pattern = str(cidr)
    names = []
    for name, data in interfaces().items():
        for inet in data.get("inet", []):
            if inet["address"][: len(pattern)] == pattern:
                names.append(inet.get("label", name))
    return names


def get_hostname(**kwargs: Any) -> str:
    """The host name (``socket.gethostname``)."""
    return socket.gethostname()


def get_fqdn(**kwargs: Any) -> str:
    """The fully qualified domain name (``socket.getfqdn``)."""
    return socket.getfqdn()


def _neighs(family_sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in str(__salt__["cmd.run"]("ip neigh show")).splitlines():
        parts = line.split()
        if len(parts) >= 5 and family_sep in parts[0]:
            out[parts[4]] = parts[0]
    return out


def ip_neighs(**kwargs: Any) -> dict[str, str]:
    """The IPv4 neighbour table: ``{mac: ip}``."""
    return _neighs(".")


def ip_neighs6(**kwargs: Any) -> dict[str, str]:
    """The IPv6 neighbour table: ``{mac: ip}``."""
    return _neighs(":")


def ipneighs(**kwargs: Any) -> dict[str, str]:
    """Alias of :func:`ip_neighs`."""
    return ip_neighs()


def ipneighs6(**kwargs: Any) -> dict[str, str]:
    """Alias of :func:`ip_neighs6`."""
    return ip_neighs6()


def _route(family: str, dest: str, gateway: str, netmask: str, flags: str, iface: str) -> dict[str, str]:
    return {
        "addr_family": family,
        "destination": dest,
        "gateway": gateway,
        "netmask": netmask,
        "flags": flags,
        "interface": iface,
    }


def parse_netstat_routes(v4: str, v6: str) -> list[dict[str, str]]:
    """Routes from ``netstat -A inet -rn`` and ``-A inet6`` (their two header lines removed)."""
    out = [
        _route("inet", c[0], c[1], c[2], c[3], c[7]) for c in (line.split() for line in v4.splitlines()) if len(c) > 7
    ]
    for line in v6.splitlines():
        c = line.split()
        if len(c) in (6, 7):
            out.append(_route("inet6", c[0], c[1], "", c[2], c[-1]))
    return out


_SKIP6 = ("unicast", "broadcast", "throw", "unreachable", "prohibit", "blackhole", "nat", "anycast", "multicast")


# the IPv4 any-address as a route table prints it (a destination or gateway, never a bind)
_ANY4 = "0.0.0.0"  # noqa: S104 - a route field, nothing listens on it


def _after(c: list[str], word: str, at: int) -> str:
    return c[at + 1] if len(c) > at + 1 and c[at] == word else ""


def parse_ip_routes(v4: str, v6: str) -> list[dict[str, str]]:
    """Routes from ``ip -4 route show table main`` and ``ip -6 route show table all``."""
    out = []
    for line in v4.splitlines():
        c = line.split()
        if not c or c[0] == "unreachable":
            continue
        if c[0] == "default":
            out.append(_route("inet", _ANY4, c[2], _ANY4, "UG", _after(c, "dev", 3)))
        else:
            net = convert_cidr(c[0])
            out.append(_route("inet", net["network"], _ANY4, net["netmask"], "U", _after(c, "dev", 1)))
    for line in v6.splitlines():
        c = line.split()
        if not c or c[0] in _SKIP6:
            continue
        if c[0] == "default":
            out.append(_route("inet6", "::/0", c[2], "", "UG", _after(c, "dev", 3)))
        elif c[0] == "local":
            out.append(_route("inet6", c[1] + "/128", "::", "", "U", _after(c, "dev", 2)))
        else:
            out.append(_route("inet6", c[0], "::", "", "U", _after(c, "dev", 1)))
    return out


def routes(family: str | None = None, **kwargs: Any) -> list[dict[str, str]]:
    """The routing table (``family``: ``inet`` or ``inet6`` only)."""
    if family not in (None, "inet", "inet6"):
        raise CommandExecutionError(f"Invalid address family {family}")
    run = __salt__["cmd.run"]
    if shutil.which("netstat"):
        found = parse_netstat_routes(
            run("netstat -A inet -rn | tail -n+3", python_shell=True),
            run("netstat -A inet6 -rn | tail -n+3", python_shell=True),
        )
    else:
        found = parse_ip_routes(
            run("ip -4 route show table main", python_shell=True),
            run("ip -6 route show table all", python_shell=True),
        )
    return [r for r in found if not family or r["addr_family"] == family]


def default_route(family: str | None = None, **kwargs: Any) -> list[dict[str, str]]:
    """The default routes (``family``: ``inet`` or ``inet6`` only)."""
    if family not in (None, "inet", "inet6"):
        raise CommandExecutionError(f"Invalid address family {family}")
    defaults = {"inet": (_ANY4, "default"), "inet6": ("::/0", "default")}
    wanted = defaults[family] if family else defaults["inet"] + defaults["inet6"]
    return [r for r in routes(family) if r["destination"] in wanted]


def ping(host: str, timeout: Any = False, return_boolean: bool = False, **kwargs: Any) -> Any:
    """``ping -c 4 host`` output (``return_boolean``: whether it answered)."""
    cmd = ["ping", "-c", "4"]
    if timeout:
        cmd = ["ping", "-W", str(timeout), "-c", "4"]
    cmd.append(str(host))
    if return_boolean:
        res = __salt__["cmd.run_all"](cmd, python_shell=False, ignore_retcode=True)
        return res["retcode"] == 0
    return __salt__["cmd.run"](cmd, python_shell=False)
