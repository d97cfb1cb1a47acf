"""The REST API requests recorded from Salt's salt-api (rest_cherrypy) and replayed against briny-api.

Used by ``dev/api_golden.py`` (records ``tests/golden/api/cases.json`` from the reference Salt)
and ``tests/e2e/test_api.py`` (sends the same requests to briny-api and compares). The fleet of
both: one minion ``m1``; ``external_auth: file`` with users ``alice`` (everything:
``.*``, ``@runner``, ``@wheel``, ``@jobs``) and ``bob`` (``test.ping`` on ``m1`` only), passwords
``alice-pw`` / ``bob-pw``. ``auth`` of a case: ``alice`` / ``bob`` (a token of that user in
``X-Auth-Token``), ``garbage`` (a token that was never issued) or None.

Masking (:func:`mask`): tokens become ``@TOKEN@``, jids ``@JID@``, the login's times ``@TIME@``,
and a minion's grains (``/minions``) the sorted list of a few of their keys, so the bodies compare
across runs and implementations.
"""

from __future__ import annotations

import json
import re
from typing import Any

USERS = {"alice": "alice-pw", "bob": "bob-pw"}
ACL = {"alice": [".*", "@runner", "@wheel", "@jobs"], "bob": [{"m1": ["test.ping"]}]}
ENABLED_CLIENTS = ["local", "local_async", "runner", "runner_async", "wheel"]
JSON = "application/json"

# name, method, path, auth, content type, body (a str is sent as is), extra headers
CASES: list[dict[str, Any]] = [
    {"name": "index", "method": "GET", "path": "/", "auth": None},
    {
        "name": "login",
        "method": "POST",
        "path": "/login",
        "auth": None,
        "body": {"username": "alice", "password": "alice-pw", "eauth": "file"},
    },
    {
        "name": "login_form",
        "method": "POST",
        "path": "/login",
        "auth": None,
        "ctype": "application/x-www-form-urlencoded",
        "body": "username=bob&password=bob-pw&eauth=file",
    },
    {
        "name": "login_wrong_password",
        "method": "POST",
        "path": "/login",
        "auth": None,
        "body": {"username": "alice", "password": "nope", "eauth": "file"},
    },
    {
        "name": "login_unknown_eauth",
        "method": "POST",
        "path": "/login",
        "auth": None,
        "body": {"username": "alice", "password": "alice-pw", "eauth": "nosuch"},
    },
    {
        "name": "no_token",
        "method": "POST",
        "path": "/",
        "auth": None,
        "body": [{"client": "local", "tgt": "*", "fun": "test.ping"}],
    },
    {
        "name": "garbage_token",
        "method": "POST",
        "path": "/",
        "auth": "garbage",
        "body": [{"client": "local", "tgt": "*", "fun": "test.ping"}],
    },
    {
        "name": "local_ping",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "local", "tgt": "*", "fun": "test.ping"}],
    },
    {
        "name": "local_args",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "local", "tgt": "m1", "fun": "test.arg", "arg": ["a", 1], "kwarg": {"k": "v"}}],
    },
    {
        "name": "local_yaml_accept",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "accept": "application/x-yaml",
        "body": [{"client": "local", "tgt": "m1", "fun": "test.echo", "arg": ["hi"]}],
    },
    {
        "name": "local_yaml_body",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "ctype": "application/x-yaml",
        "body": "- client: local\n  tgt: m1\n  fun: test.echo\n  arg: [hi]\n",
    },
    {
        "name": "local_form",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "ctype": "application/x-www-form-urlencoded",
        "body": "client=local&tgt=m1&fun=test.echo&arg=hi",
    },
    {
        "name": "local_full_return",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [
            {
                "client": "local",
                "tgt": "m1",
                "fun": "test.ping",
                "full_return": True,
                "batch": None,
                "tgt_type": "glob",
                "timeout": 30,
            }
        ],
    },
    {
        "name": "local_async_full_return",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "local_async", "tgt": "m1", "fun": "test.ping", "full_return": True, "batch": None}],
    },
    {
        "name": "runner_kwarg_text",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "runner", "fun": "test.arg", "arg": ["a", "k=v"], "full_return": True, "timeout": 30}],
    },
    {
        "name": "local_nomatch",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "local", "tgt": "nosuch-minion", "fun": "test.ping"}],
    },
    {
        "name": "local_async",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "local_async", "tgt": "m1", "fun": "test.ping"}],
    },
    {
        "name": "runner",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "runner", "fun": "test.arg", "arg": ["a"], "kwarg": {"k": "v"}}],
    },
    {
        "name": "runner_async",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "runner_async", "fun": "test.arg", "arg": ["a"]}],
    },
    {
        "name": "wheel",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "wheel", "fun": "key.list_all"}],
    },
    {
        "name": "unknown_client",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "nosuch", "tgt": "*", "fun": "test.ping"}],
    },
    {
        "name": "client_not_enabled",
        "method": "POST",
        "path": "/",
        "auth": "alice",
        "body": [{"client": "local_batch", "tgt": "*", "fun": "test.ping"}],
    },
    {"name": "no_client", "method": "POST", "path": "/", "auth": "alice", "body": [{"tgt": "*", "fun": "test.ping"}]},
    {
        "name": "bob_ping",
        "method": "POST",
        "path": "/",
        "auth": "bob",
        "body": [{"client": "local", "tgt": "m1", "fun": "test.ping"}],
    },
    {
        "name": "bob_refused_fun",
        "method": "POST",
        "path": "/",
        "auth": "bob",
        "body": [{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": ["touch /tmp/briny-api-should-not-exist"]}],
    },
    {
        "name": "bob_refused_runner",
        "method": "POST",
        "path": "/",
        "auth": "bob",
        "body": [{"client": "runner", "fun": "test.arg", "arg": ["a"]}],
    },
    {
        "name": "bob_refused_wheel",
        "method": "POST",
        "path": "/",
        "auth": "bob",
        "body": [{"client": "wheel", "fun": "key.list_all"}],
    },
    {"name": "malformed_json", "method": "POST", "path": "/", "auth": "alice", "body": '[{"client": '},
    {"name": "not_a_lowstate", "method": "POST", "path": "/", "auth": "alice", "body": '"hello"'},
    {"name": "huge_body", "method": "POST", "path": "/", "auth": "alice", "body": "huge"},
    {"name": "accept_unsupported", "method": "GET", "path": "/", "auth": "alice", "accept": "text/x-nosuch"},
    {"name": "minions_one", "method": "GET", "path": "/minions/m1", "auth": "alice"},
    {"name": "minions_all", "method": "GET", "path": "/minions", "auth": "alice"},
    {
        "name": "minions_post",
        "method": "POST",
        "path": "/minions",
        "auth": "alice",
        "body": [{"tgt": "m1", "fun": "test.ping"}],
    },
    {"name": "minions_no_token", "method": "GET", "path": "/minions", "auth": None},
    {"name": "jobs_unknown", "method": "GET", "path": "/jobs/20000101000000000000", "auth": "alice"},
    {
        "name": "run",
        "method": "POST",
        "path": "/run",
        "auth": None,
        "body": [
            {
                "client": "local",
                "tgt": "m1",
                "fun": "test.ping",
                "username": "alice",
                "password": "alice-pw",
                "eauth": "file",
            }
        ],
    },
    {
        "name": "run_wrong_password",
        "method": "POST",
        "path": "/run",
        "auth": None,
        "body": [
            {
                "client": "local",
                "tgt": "m1",
                "fun": "test.ping",
                "username": "alice",
                "password": "nope",
                "eauth": "file",
            }
        ],
    },
    {"name": "hook", "method": "POST", "path": "/hook/my/tag", "auth": "alice", "body": {"foo": "bar"}},
    {"name": "hook_no_token", "method": "POST", "path": "/hook/my/tag", "auth": None, "body": {"foo": "bar"}},
    {"name": "stats_no_token", "method": "GET", "path": "/stats", "auth": None},
    {"name": "logout_no_token", "method": "GET", "path": "/logout", "auth": None},
    {"name": "logout", "method": "GET", "path": "/logout", "auth": "bob"},
    {
        "name": "after_logout",
        "method": "POST",
        "path": "/",
        "auth": "bob",
        "body": [{"client": "local", "tgt": "m1", "fun": "test.ping"}],
    },
]

HUGE_BYTES = 2 * 1024 * 1024  # over the max_request_body_size the tests configure (1 MiB)
KEPT_HEADERS = ("Content-Type", "Allow", "WWW-Authenticate", "X-Salt-Version")

_JID = re.compile(r"\b\d{20}\b")
_TOKEN_KEYS = {"token"}
_TIME_KEYS = {"start", "expire", "_stamp"}
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_MESSAGE = re.compile(r"<p>(.*?)</p>", re.S)


def html_error(text: str) -> Any:
    """An HTML error page as ``{"title", "message"}`` (CherryPy's page carries a traceback and its
    version, which are not compared); other text as is."""
    title, message = _TITLE.search(text), _MESSAGE.search(text)
    if title is None:
        return text
    return {"title": title.group(1).strip(), "message": message.group(1).strip() if message else ""}


def request_parts(case: dict[str, Any], tokens: dict[str, str]) -> tuple[bytes | None, dict[str, str]]:
    """The body and headers of one case."""
    headers = {"Accept": case.get("accept", JSON)}
    body = case.get("body")
    data: bytes | None = None
    if case.get("name") == "huge_body":
        data = json.dumps([{"client": "local", "tgt": "*", "fun": "test.echo", "arg": ["x" * HUGE_BYTES]}]).encode()
        headers["Content-Type"] = JSON
    elif body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        headers["Content-Type"] = case.get("ctype", JSON)
    auth = case.get("auth")
    if auth == "garbage":
        headers["X-Auth-Token"] = "0123456789abcdef0123456789abcdef01234567"
    elif auth:
        headers["X-Auth-Token"] = tokens[auth]
    return data, headers


def mask(obj: Any, key: str | None = None) -> Any:
    if isinstance(obj, dict):
        return {k: mask(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [mask(v, key) for v in obj]
    if key in _TOKEN_KEYS and isinstance(obj, str):
        return "@TOKEN@"
    if key in _TIME_KEYS and isinstance(obj, (int, float, str)):
        return "@TIME@"
    if isinstance(obj, str):
        return _JID.sub("@JID@", obj)
    return obj


def mask_grains(body: Any) -> Any:
    """``{"return": [{minion: grains}]}`` with each minion's grains as a few of their keys."""
    if isinstance(body, dict) and isinstance(body.get("return"), list):
        out = []
        for item in body["return"]:
            if isinstance(item, dict):
                item = {
                    m: sorted(k for k in g if k in ("id", "os", "kernel")) if isinstance(g, dict) else g
                    for m, g in item.items()
                }
            out.append(item)
        return {**body, "return": out}
    return body
