"""The HTTP side of ``briny-api`` answers: request bodies, content types, errors, as Salt's.

Runs on ``briny-api``'s loop. Bodies in (:func:`read_body`, by ``Content-Type``):
``application/json``, ``application/x-yaml`` / ``text/yaml``, and
``application/x-www-form-urlencoded`` (a key given twice, or ``arg``, becomes a list); a body
that does not parse is a 400 with Salt's message (``Invalid JSON document``, ...), one over
``max_request_body_size`` a 413, any other type a 415. Bodies out (:func:`render`, by
``Accept``): JSON (``*/*`` and no ``Accept`` too) or YAML, else 406 with Salt's message. Errors
(:func:`error`) are an HTML page as CherryPy's (title and message, no traceback), which is what
Salt's clients read; ``debug: True`` adds nothing more (briny-api logs the traceback instead).
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import yaml
from aiohttp import web

from briny.common.exceptions import ApiError

OUT_TYPES = ("application/json", "application/x-yaml")
_YAML_IN = ("application/x-yaml", "text/yaml", "application/yaml")
_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            406: "Not Acceptable", 413: "Request Entity Too Large", 415: "Unsupported Media Type",
            500: "Internal Server Error", 503: "Service Unavailable", 504: "Gateway Timeout"}  # fmt: skip
NO_CACHE = {
    "Cache-Control": "no-cache, must-revalidate",
    "Pragma": "no-cache",
    "Expires": "Sun, 28 Jan 2007 00:00:00 GMT",
}


def page(status: int, message: str) -> str:
    title = f"{status} {_REASONS.get(status, '')}".strip()
    esc = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        '<!DOCTYPE html>\n<html>\n<head>\n    <meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
        f"\n    <title>{title}</title>\n</head>\n    <body>\n        <h2>{title}</h2>\n        <p>{esc}</p>\n"
        '        <div id="powered_by"><span>Powered by briny-api</span></div>\n    </body>\n</html>\n'
    )


def error(status: int, message: str, allow: str | None = None) -> web.Response:
    headers = {"Allow": allow} if allow else {}
    return web.Response(status=status, text=page(status, message), content_type="text/html", charset="utf-8",
                        headers=headers)  # fmt: skip


def out_type(accept: str | None) -> str:
    """The type to answer in for an ``Accept`` header; ApiError 406 when none can be served."""
    if not accept:
        return OUT_TYPES[0]
    offers: list[tuple[float, int, str]] = []
    for n, part in enumerate(accept.split(",")):
        bits = [b.strip() for b in part.split(";")]
        mime, q = bits[0].lower(), 1.0
        for b in bits[1:]:
            if b.startswith("q="):
                try:
                    q = float(b[2:])
                except ValueError:
                    q = 0.0
        if q > 0 and mime:
            offers.append((-q, n, mime))
    for _, _, mime in sorted(offers):
        if mime in ("*/*", "application/*"):
            return OUT_TYPES[0]
        if mime in OUT_TYPES:
            return mime
        if mime in ("text/yaml",):
            return "application/x-yaml"
    raise ApiError(
        406,
        f"Your client sent this Accept header: {accept}. But this resource only emits these media types: "
        + ", ".join(OUT_TYPES)
        + ".",
    )


def render(request: web.Request, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    ctype = out_type(request.headers.get("Accept"))
    if ctype == "application/x-yaml":
        text = yaml.safe_dump(_plain(data), default_flow_style=False)
    else:
        text = json.dumps(data, default=str)
    extra = dict(headers or {})
    if request.app["settings"].expire_responses:
        extra.update(NO_CACHE)
    return web.Response(status=status, text=text, content_type=ctype, charset="utf-8", headers=extra)


def _plain(data: Any) -> Any:
    """Data YAML's safe dumper takes (tuples as lists, anything odd as text)."""
    return json.loads(json.dumps(data, default=str))


class _PlainLoader(yaml.SafeLoader):
    """YAML's safe loader without anchors and aliases: a body of nested aliases (a "billion
    laughs", a few hundred bytes) loads as a tiny graph that expands to billions of nodes when
    anything walks it. A request body has no need of them: one is refused as invalid YAML."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(None, None, "anchors and aliases are refused", event.start_mark)
        return super().compose_node(parent, index)


def load_yaml(text: str) -> Any:
    """A YAML request body as data; yaml.YAMLError for bad YAML or one with anchors or aliases."""
    return yaml.load(text, Loader=_PlainLoader)  # noqa: S506 - a SafeLoader without aliases


INLINE_PARSE = 4096  # bytes: a longer body is parsed in the API's thread pool, not on its loop


async def read_body(request: web.Request) -> Any:
    """The parsed body (None when empty); ApiError for a body Salt refuses."""
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise ApiError(413, "The entity sent with the request exceeds the maximum allowed bytes.") from None
    if not raw:
        return None
    ctype = request.content_type.lower()
    if len(raw) > INLINE_PARSE:
        return await request.app["api"].blocking(parse_body, ctype, raw)
    return parse_body(ctype, raw)


def parse_body(ctype: str, raw: bytes) -> Any:
    """A body of type ``ctype`` as data; ApiError 400 (Salt's message) or 415."""
    text = raw.decode("utf-8", "replace")
    if ctype == "application/json":
        try:
            return json.loads(text)
        except ValueError:
            raise ApiError(400, "Invalid JSON document") from None
    if ctype in _YAML_IN:
        try:
            return load_yaml(text)
        except yaml.YAMLError:
            raise ApiError(400, "Invalid YAML document") from None
    if ctype in ("application/x-www-form-urlencoded", "text/plain", "application/octet-stream", ""):
        pairs = urllib.parse.parse_qsl(text, keep_blank_values=True)
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                out[key] = [*out[key], value] if isinstance(out[key], list) else [out[key], value]
            else:
                out[key] = [value] if key == "arg" else value
        return out
    raise ApiError(415, f"Unsupported Media Type: {ctype}; send application/json, application/x-yaml or a form")


def lowstate(data: Any) -> list[dict[str, Any]]:
    """A body as a list of chunks (a map is one chunk); ApiError 400 otherwise, as Salt."""
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(c, dict) for c in data):
        raise ApiError(400, "Lowstates must be a list")
    return data
