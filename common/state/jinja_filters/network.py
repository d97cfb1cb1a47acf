"""Salt's Jinja filters on networks: IP addresses and networks, MAC addresses, HTTP.

Pure but for ``http_query``, which asks the render environment's ``boundary``
first (refused on the master). Part of :mod:`briny.common.state.jinja_filters`.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Callable
from typing import Any

from jinja2 import pass_environment

from briny.common import httpquery

from .host import ask_host

# --- networks ------------------------------------------------------------


def _ip(value: Any) -> Any:
    text = str(value)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return ipaddress.ip_interface(text)


def _ip_filter(value: Any, version: int | None) -> Any:
    def ok(item: Any) -> bool:
        try:
            addr = _ip(item)
        except ValueError:
            return False
        return version is None or addr.version == version

    if isinstance(value, (list, tuple, set)):
        if version is None:  # Salt lists the IPv4 ones first
            return _ip_filter(value, 4) + _ip_filter(value, 6)
        return [item for item in value if ok(item)]
    return value if ok(value) else None


def ipaddr(value: Any, options: Any = None) -> Any:
    return _ip_filter(value, None)


def _is_ip(value: Any, version: int | None) -> bool:
    try:
        addr = _ip(value)
    except ValueError:
        return False
    return version is None or addr.version == version


def _versioned(fun: Callable[[Any, int | None], Any], version: int | None) -> Callable[..., Any]:
    return lambda value, options=None: fun(value, version)


def ipwrap(value: Any) -> Any:
    if isinstance(value, str) and _is_ip(value, 6):
        return f"[{value}]"
    return value


def network_hosts(value: str, options: Any = None, version: Any = None) -> list[str]:
    return [str(h) for h in ipaddress.ip_network(value, strict=False).hosts()]


def network_size(value: str, options: Any = None, version: Any = None) -> int:
    return ipaddress.ip_network(value, strict=False).num_addresses


def ip_host(value: str, options: Any = None, version: Any = None) -> str:
    return str(ipaddress.ip_interface(value))


# --- MAC addresses and HTTP --------------------------------------------------


def gen_mac(prefix: str = "AC:DE:48") -> str:
    """A random MAC address under the OUI ``prefix`` (``AC:DE:48:1F:00:A2``)."""
    rnd = random.SystemRandom()
    return prefix + "".join(f":{rnd.randint(0, 0xFF):02X}" for _ in range(3))


@pass_environment
def http_query(environment: Any, url: str, **kwargs: Any) -> dict[str, Any]:
    """Salt's ``http_query``: one request, answered as Salt answers (:mod:`briny.common.httpquery`:
    ``{"body": ...}``, failures in the answer, Salt's ``test`` / ``test_url`` options, a URL that is
    not http(s) refused). Asks the render environment's boundary first (refused on the master)."""
    ask_host(environment, "http_query")
    opts = getattr(environment, "globals", {}).get("opts") or {}
    timeout = float(opts.get("http_request_timeout", 3600)) if hasattr(opts, "get") else 3600.0
    return httpquery.query(url, timeout=timeout, **kwargs)


FILTERS: dict[str, Callable[..., Any]] = {
    "ipaddr": ipaddr,
    "ipv4": _versioned(_ip_filter, 4),
    "ipv6": _versioned(_ip_filter, 6),
    "is_ip": _versioned(_is_ip, None),
    "is_ipv4": _versioned(_is_ip, 4),
    "is_ipv6": _versioned(_is_ip, 6),
    "ipwrap": ipwrap,
    "network_hosts": network_hosts,
    "network_size": network_size,
    "ip_host": ip_host,
    "gen_mac": gen_mac,
    "http_query": http_query,
}
