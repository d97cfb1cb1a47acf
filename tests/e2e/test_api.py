"""briny-api end to end: a real master, minion and briny-api on 127.0.0.1, driven by plain HTTP
and by Salt's own client ``pepper``, compared with what Salt's salt-api answered to the same
requests (``tests/golden/api/cases.json``, recorded by ``dev/api_golden.py``)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import apicases

from .apisupport import ApiProc, api_fleet, call, login, start_api
from .support import Fleet

pytestmark = pytest.mark.slow

GOLDEN = json.loads((Path(__file__).parent.parent / "golden" / "api" / "cases.json").read_text())
PEPPER = Path(os.environ.get("VIRTUAL_ENV") or Path(__file__).resolve().parents[2] / ".venv") / "bin" / "pepper"

# Deliberate differences from Salt 3007.17 (docs/API.md, "Differences from salt-api"):
DIFFERENT = {
    # Salt 3007.17 answers /logout with a 500 (and the token stays valid); briny clears it
    "logout": (200, {"return": "Your token has been cleared"}),
    "logout_no_token": (401, {"title": "401 Unauthorized", "message": "No permission -- see authorization schemes"}),
    "after_logout": (401, {"title": "401 Unauthorized", "message": "No permission -- see authorization schemes"}),
    # Salt's CherryPy does not apply max_request_body_size from the master config; briny does
    "huge_body": (413, {"title": "413 Request Entity Too Large",
                        "message": "The entity sent with the request exceeds the maximum allowed bytes."}),
}  # fmt: skip


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Fleet, ApiProc]]:
    fleet, port = api_fleet(tmp_path_factory.mktemp("api"))
    proc = None
    try:
        proc = start_api(fleet, port)
        yield fleet, proc
    finally:
        if proc is not None:
            proc.close()
        fleet.close()


def _body(case: dict[str, Any], raw: bytes, ctype: str) -> Any:
    text = raw.decode("utf-8", "replace")
    if ctype == "application/json":
        body = json.loads(text)
    elif ctype == "application/x-yaml":
        body = yaml.safe_load(text)
    else:
        body = apicases.html_error(text)
    if case["name"].startswith("minions_"):
        body = apicases.mask_grains(body)
    return apicases.mask(body)


def test_answers_as_salt_api(api: tuple[Fleet, ApiProc]) -> None:
    fleet, proc = api
    tokens = {u: login(proc.port, u, pw)["token"] for u, pw in apicases.USERS.items()}
    problems = []
    for case in apicases.CASES:
        data, headers = apicases.request_parts(case, tokens)
        status, got_headers, raw = call(proc.port, case["method"], case["path"], data, headers)
        ctype = got_headers.get("Content-Type", "").split(";")[0]
        body = _body(case, raw, ctype)
        want = GOLDEN[case["name"]]
        want_status, want_body = DIFFERENT.get(case["name"], (want["status"], want["body"]))
        if case["name"] == "index":  # briny names the clients it has
            want_body = {**want_body, "clients": ["local", "local_async", "runner", "runner_async", "wheel"]}
        if case["name"] == "wheel":  # briny's key store has no "local" folder (the master's own keys)
            want_body = json.loads(json.dumps(want_body))
            want_body["return"][0]["data"]["return"].pop("local", None)
        if case["name"] == "jobs_unknown":
            want_body = json.loads(json.dumps(want_body))
            want_body["info"][0]["StartTime"] = (
                body.get("info", [{}])[0].get("StartTime") if isinstance(body, dict) else None
            )
        if case["name"] == "local_args":  # the minion's test.arg: briny's __pub_* keys are its own (not the API's)
            body, want_body = _no_pub(body), _no_pub(want_body)
        if status != want_status or body != want_body:
            problems.append(f"{case['name']}: {status} {body!r}\n   Salt: {want_status} {want_body!r}")
        if case["name"] not in DIFFERENT:
            want_type = want["headers"].get("Content-Type")
            if ctype != want_type:
                problems.append(f"{case['name']}: Content-Type {ctype}, Salt {want_type}")
            if got_headers.get("Allow") != want["headers"].get("Allow"):
                problems.append(
                    f"{case['name']}: Allow {got_headers.get('Allow')}, Salt {want['headers'].get('Allow')}"
                )
        if case["name"].startswith("login") and status == 200:
            assert "session_id=" in got_headers.get("Set-Cookie", ""), case["name"]
            assert got_headers.get("X-Auth-Token") == json.loads(raw)["return"][0]["token"]
    assert not problems, "\n".join(problems) + "\n" + proc.logs()[-3000:]


def _no_pub(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _no_pub(v) for k, v in data.items() if not str(k).startswith("__pub_")}
    if isinstance(data, list):
        return [_no_pub(v) for v in data]
    return data


def _pepper(proc: ApiProc, *args: str, user: str = "alice") -> Any:
    env = {**os.environ, "SALTAPI_URL": proc.url, "SALTAPI_USER": user, "SALTAPI_PASS": apicases.USERS[user],
           "SALTAPI_EAUTH": "file", "HOME": str(proc.log.parent)}  # fmt: skip
    res = subprocess.run([str(PEPPER), *args], env=env, capture_output=True, text=True, timeout=90)
    assert res.returncode == 0, f"pepper {args}: {res.returncode}\n{res.stdout}\n{res.stderr}\n{proc.logs()[-2000:]}"
    return json.loads(res.stdout)


def test_pepper_runs_unchanged(api: tuple[Fleet, ApiProc]) -> None:
    fleet, proc = api
    ping = _pepper(proc, "*", "test.ping")["return"][0]["m1"]
    assert ping["ret"] is True and ping["retcode"] == 0
    echo = _pepper(proc, "m1", "test.echo", "hello")["return"][0]["m1"]
    assert echo["ret"] == "hello"
    runner = _pepper(proc, "--client", "runner", "test.arg", "a", "k=v")["return"][0]
    assert runner["data"]["return"] == {"args": ["a"], "kwargs": {"k": "v"}}
    wheel = _pepper(proc, "--client", "wheel", "key.list_all")["return"][0]
    assert wheel["data"]["return"]["minions"] == ["m1"] and wheel["data"]["success"] is True
    started = _pepper(proc, "--client", "local_async", "m1", "test.ping")["return"][0]
    assert started["minions"] == ["m1"]
    returns = fleet.wait_returns(started["jid"], ["m1"])
    assert returns["m1"] is True
