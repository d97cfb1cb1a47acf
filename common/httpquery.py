"""One HTTP(S) request the way Salt's ``http.query`` makes it, answered as Salt answers.

Shared by the ``http.query`` execution function (``minion/host/modules/http.py``) and the
``http_query`` Jinja filter (``common/state/jinja_filters/network.py``, which asks the render
environment's boundary first). Standard library only (``urllib``); one backend whatever
``backend`` asks (Salt's ``tornado``, ``requests`` and ``urllib2`` answer alike).

The answer is a dict, never an exception for a failed request: ``{"body": ...}`` and, when
asked, ``status``, ``headers`` (a dict: Salt prints its tornado object's repr), ``text`` and
``dict`` (the body decoded: JSON, YAML, or by ``Content-Type`` with ``decode_type=auto``).
A refused connection is ``{"error": "[Errno 111] Connection refused"}`` (``status`` 0 first
when asked), an HTTP error ``{"status": 404, "error": "HTTP 404: Not Found", "body": ...}``.
``test=True`` makes no request and answers ``{}``, unless a ``test_url`` is given: then the
request is made (to ``url``, as Salt 3007 makes it) and ``"test": True`` leads the answer.
A URL that is not http(s) (``file:``, ``ftp:``, a path) raises ``ValueError`` with Salt's
"Unsupported url scheme: URL"; options briny does not take are named in an ``error``.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

import yaml
from .truth import is_true

# Salt's options briny takes as Salt does, besides the keyword arguments of query()
_IGNORED = {"backend", "opts", "node", "requests_lib"}


def _decoded(body: str, content_type: str, decode_type: str) -> Any:
    kind = decode_type
    if kind == "auto":
        kind = "json" if "json" in content_type else "yaml" if "yaml" in content_type else "plain"
    if kind == "json":
        return json.loads(body)
    if kind == "yaml":
        return yaml.safe_load(body)
    return body


def _request(
    url: str,
    method: str,
    params: Any,
    data: Any,
    header_dict: Any,
    header_list: Any,
    username: str | None,
    password: str | None,
) -> urllib.request.Request:
    if params:
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
    payload = data.encode() if isinstance(data, str) else data
    request = urllib.request.Request(url, data=payload, method=str(method).upper())  # noqa: S310 - http(s) only (query)
    for line in header_list or []:
        key, _, value = str(line).partition(":")
        request.add_header(key.strip(), value.strip())
    for key, value in (header_dict or {}).items() if isinstance(header_dict, Mapping) else ():
        request.add_header(str(key), str(value))
    if username is not None:
        token = base64.b64encode(f"{username}:{password or ''}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    return request


def query(
    url: str,
    method: str = "GET",
    params: Any = None,
    data: Any = None,
    header_dict: Any = None,
    header_list: Any = None,
    username: str | None = None,
    password: str | None = None,
    status: Any = False,
    headers: Any = False,
    text: Any = False,
    decode: Any = False,
    decode_type: str = "auto",
    verify_ssl: Any = True,
    test: Any = False,
    test_url: str | None = None,
    timeout: float = 3600.0,
    **kwargs: Any,
) -> dict[str, Any]:
    """The answer to one request (see the module docstring)."""
    unsupported = sorted(k for k in kwargs if k not in _IGNORED and not k.startswith("__"))
    if unsupported:
        return {"error": f"http.query options briny does not support: {', '.join(unsupported)}"}
    url = str(url)
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):  # as Salt's: never file: or ftp:
        raise ValueError(f"Unsupported url scheme: {url}")
    ret: dict[str, Any] = {}
    if is_true(test):
        if test_url is None:
            return ret
        ret["test"] = True
    request = _request(url, method, params, data, header_dict, header_list, username, password)
    context = None if is_true(verify_ssl) else ssl._create_unverified_context()  # noqa: S323 - verify_ssl=False asks for it
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as resp:  # noqa: S310 - http(s) only
            code, got_headers, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        ret.update(status=exc.code, error=f"HTTP {exc.code}: {exc.reason}", body=exc.read().decode("utf-8", "replace"))
        return ret
    except urllib.error.URLError as exc:
        if is_true(status):
            ret["status"] = 0
        ret["error"] = str(exc.reason)
        return ret
    except (TimeoutError, OSError, ValueError) as exc:
        if is_true(status):
            ret["status"] = 0
        ret["error"] = str(exc)
        return ret
    body = raw.decode("utf-8", "replace")
    ret["body"] = body
    if is_true(status):
        ret["status"] = code
    if is_true(headers):
        ret["headers"] = got_headers
    if is_true(text):
        ret["text"] = body
    if is_true(decode):
        try:
            ret["dict"] = _decoded(body, got_headers.get("Content-Type", ""), decode_type)
        except (ValueError, yaml.YAMLError) as exc:
            ret["error"] = f"Unable to decode the answer: {exc}"
    return ret
