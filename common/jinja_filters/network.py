"""Salt's Jinja filters on networks: IP addresses and networks, MAC addresses, HTTP.

Pure but for ``http_query``, which asks the render environment's ``boundary``
first (refused on the master). Part of :mod:`briny.common.jinja_filters`.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

import yaml
from jinja2 import pass_environment

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


def _decoded(body: str, content_type: str, decode_type: str) -> Any:
    kind = decode_type
    if kind == "auto":
        kind = "json" if "json" in content_type else "yaml" if "yaml" in content_type else "plain"
    if kind == "json":
        return json.loads(body)
    if kind == "yaml":
        return yaml.safe_load(body)
    return body


@pass_environment
def http_query(
    environment: Any,
    url: str,
    method: str = "GET",
    params: Any = None,
    data: Any = None,
    header_dict: Any = None,
    username: str | None = None,
    password: str | None = None,
    status: bool = False,
    headers: bool = False,
    text: bool = False,
    decode: bool = False,
    decode_type: str = "auto",
    verify_ssl: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    """Salt's ``http_query``: ``{"body": ...}`` (and ``status``, ``headers``, ``text``, ``dict``
    when asked). A failure is in the answer, never raised: ``{"error": "[Errno 111] Connection
    refused"}`` (``status`` 0 first when asked), an HTTP error ``{"status": 404, "error": "HTTP
    404: Not Found", "body": ...}``, as Salt answers offline. Options briny does not take are
    named in an ``error``. A URL that is not http(s) (``file:``, ``ftp:``) is refused with
    Salt's error."""
    ask_host(environment, "http_query")
    if kwargs:
        return {"error": f"http_query options briny does not support: {', '.join(sorted(kwargs))}"}
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):  # as Salt's: never file: or ftp:
        raise ValueError(f"Unsupported url scheme: {url}")
    if params:
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
    payload = data.encode() if isinstance(data, str) else data
    request = urllib.request.Request(url, data=payload, method=str(method).upper())  # noqa: S310 - http(s) only (above)
    for key, value in (header_dict or {}).items():
        request.add_header(str(key), str(value))
    if username is not None:
        token = base64.b64encode(f"{username}:{password or ''}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    context = None if verify_ssl else ssl._create_unverified_context()  # noqa: S323 - verify_ssl=False asks for it
    opts = getattr(environment, "globals", {}).get("opts") or {}
    timeout = float(opts.get("http_request_timeout", 3600)) if hasattr(opts, "get") else 3600.0
    ret: dict[str, Any] = {}
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as resp:  # noqa: S310 - http(s) only
            code, got_headers, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        ret["status"] = exc.code
        ret["error"] = f"HTTP {exc.code}: {exc.reason}"
        ret["body"] = exc.read().decode("utf-8", "replace")
        return ret
    except urllib.error.URLError as exc:
        reason = exc.reason
        if status:
            ret["status"] = 0
        ret["error"] = str(reason)
        return ret
    except (TimeoutError, OSError, ValueError) as exc:
        if status:
            ret["status"] = 0
        ret["error"] = str(exc)
        return ret
    body = raw.decode("utf-8", "replace")
    ret["body"] = body
    if status:
        ret["status"] = code
    if headers:
        ret["headers"] = got_headers
    if text:
        ret["text"] = body
    if decode:
        try:
            ret["dict"] = _decoded(body, got_headers.get("Content-Type", ""), decode_type)
        except (ValueError, yaml.YAMLError) as exc:
            ret["error"] = f"Unable to decode the answer: {exc}"
    return ret


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
