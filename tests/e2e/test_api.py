"""briny-api end to end: a real master, minion and briny-api on 127.0.0.1, driven by plain HTTP
and by Salt's own client ``pepper``, compared with what Salt's salt-api answered to the same
requests (``tests/golden/api/cases.json``, recorded by ``dev/api_golden.py``)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import apicases

from tests.waiting import wait_until

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


PAM_USER, PAM_GROUP, PAM_PASSWORD = "brinyapi-pam", "brinyapi-grp", "Pam-pw-4711"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Fleet, ApiProc]]:
    root = tmp_path_factory.mktemp("api")
    htpasswd = root / "htpasswd"
    eauth = {
        "file": {"^filename": str(htpasswd), "^filetype": "text", "^hashtype": "plaintext", **apicases.ACL},
        "pam": {PAM_USER: [{"m1": ["test.ping"]}], f"{PAM_GROUP}%": ["test.echo"]},
    }
    static = root / "ui"
    (static / "js").mkdir(parents=True)
    (static / "js" / "app.js").write_text("console.log('ui')\n")
    (static / "leak").symlink_to(root / "htpasswd")  # a symlink out of the folder is not served
    (root / "index.html").write_text("<html>the ui</html>\n")
    ui = {"static": str(static), "app": str(root / "index.html")}
    fleet, port = api_fleet(root, external_auth=eauth, api_opts=ui)
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
    logs = proc.logs()
    # refusals any peer causes are throttled (one line a second per kind, with counts: the unit tests)
    for refused in (" from 127.0.0.1 refused: 4", "api: login of 'alice'"):
        assert refused in logs, refused


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


def _post(proc: ApiProc, token: str, chunks: list[dict[str, Any]], path: str = "/") -> tuple[int, Any]:
    headers = {"X-Auth-Token": token, "Content-Type": "application/json", "Accept": "application/json"}
    status, got, raw = call(proc.port, "POST", path, json.dumps(chunks).encode(), headers)
    return status, json.loads(raw) if got.get("Content-Type", "").startswith("application/json") else raw.decode()


def _jobs_of(fleet: Fleet, fun: str) -> list[str]:
    res = fleet.run("jobs.list_jobs", "--out=json")
    assert res.returncode == 0, res.stderr
    return [jid for jid, job in res.json().items() if job.get("Function") == fun]


def test_refusals_are_logged_and_run_nothing(api: tuple[Fleet, ApiProc]) -> None:
    fleet, proc = api
    marker = fleet.root / "api-refused-marker"
    bob = login(proc.port, "bob", "bob-pw")["token"]
    touch = {"tgt": "m1", "fun": "cmd.run", "arg": [f"touch {marker}"]}
    attempts = [
        (bob, [{"client": "local", **touch}], 401),
        (bob, [{"client": "local_async", **touch}], 401),
        (bob, [{"client": "runner", "fun": "salt.cmd", "arg": ["cmd.run", f"touch {marker}"]}], 401),
        (bob, [{"client": "wheel", "fun": "key.delete", "match": "m1"}], 401),
        (bob, [{"client": "ssh", **touch}], 400),
        (bob, [{"client": "local_batch", **touch}], 400),
        # one bad chunk refuses the whole lowstate before anything runs
        (bob, [{"client": "local", "tgt": "m1", "fun": "test.ping"}, {"client": "nosuch", **touch}], 400),
        ("0" * 40, [{"client": "local", **touch}], 401),
    ]
    for token, chunks, want in attempts:
        status, body = _post(proc, token, chunks)
        assert status == want, (chunks, status, body)
    status, _ = _post(proc, "", [{"client": "local", **touch, "username": "bob", "password": "no", "eauth": "file"}],
                      "/run")  # fmt: skip
    assert status == 401
    # an expired token (its record still on disk, where briny-api keeps tokens) is refused too
    from briny.common.config import load_master_config
    from briny.master.api.tokens import TokenStore

    expired = TokenStore(load_master_config(str(fleet.master_conf))).create(
        {"user": "alice", "eauth": "file", "perms": [".*"]}, -1
    )
    assert _post(proc, expired["token"], [{"client": "local", **touch}])[0] == 401
    assert _post(proc, bob, [{"client": "local", "tgt": "m1", "fun": "test.ping"}]) == (200, {"return": [{"m1": True}]})
    assert not marker.exists()
    assert _jobs_of(fleet, "cmd.run") == [] and _jobs_of(fleet, "salt.cmd") == []
    assert fleet.keys()["minions"] == ["m1"]
    logs = proc.logs()
    assert "refused bob (eauth file): cmd.run on 'm1' (glob)" in logs
    assert "refused bob (eauth file): runner salt.cmd" in logs and "refused bob (eauth file): wheel key.delete" in logs
    assert "refused bob (eauth file): client 'local_batch': Client disabled: 'local_batch'" in logs
    assert "refused bob (eauth file): client 'ssh': Client disabled: 'ssh'" in logs
    assert "refused bob (eauth file): client 'nosuch': Invalid client specified: 'nosuch'" in logs
    assert "refused: user bob may not run cmd.run on m1" in fleet.master.log_file.read_text()
    for token in (bob, expired["token"]):
        assert token not in logs and token not in fleet.master.log_file.read_text()
    assert "bob-pw" not in logs


def _stream(proc: ApiProc, token: str) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=30)
    conn.request("GET", "/events", headers={"X-Auth-Token": token, "Accept": "text/event-stream"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/event-stream")
    assert resp.readline() == b"retry: 400\n"
    return resp


def _events_until(resp: http.client.HTTPResponse, tag: str) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    deadline = time.monotonic() + 30
    current = ""
    while time.monotonic() < deadline:
        line = resp.readline().decode().rstrip("\n")
        if line.startswith("tag: "):
            current = line[5:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
            assert data["tag"] == current
            seen.append((current, data["data"]))
            if current == tag:
                return seen
    raise AssertionError(f"no {tag} within 30 s; saw {[t for t, _ in seen]}")


def test_events_stream_filtered_by_acl(api: tuple[Fleet, ApiProc]) -> None:
    fleet, proc = api
    alice, bob = (login(proc.port, u, pw)["token"] for u, pw in apicases.USERS.items())
    everything, bobs = _stream(proc, alice), _stream(proc, bob)
    try:
        status, body = _post(proc, alice, [{"client": "local_async", "tgt": "m1", "fun": "test.echo", "arg": ["x"]}])
        echo = body["return"][0]["jid"]
        fleet.wait_returns(echo, ["m1"])
        status, body = _post(proc, bob, [{"client": "local_async", "tgt": "m1", "fun": "test.ping"}])
        ping = body["return"][0]["jid"]
        seen = _events_until(everything, f"salt/job/{ping}/ret/m1")
        tags = [t for t, _ in seen]
        assert f"salt/job/{echo}/new" in tags and f"salt/job/{echo}/ret/m1" in tags
        ret = dict(seen)[f"salt/job/{ping}/ret/m1"]
        assert ret["return"] is True and ret["fun"] == "test.ping" and ret["id"] == "m1" and "_stamp" in ret
        bob_seen = [t for t, _ in _events_until(bobs, f"salt/job/{ping}/ret/m1")]
        assert f"salt/job/{ping}/new" in bob_seen
        assert not [t for t in bob_seen if echo in t or not t.startswith(f"salt/job/{ping}/")], bob_seen
    finally:
        everything.close()
        bobs.close()
    assert call(proc.port, "GET", "/events", headers={"X-Auth-Token": "f" * 40})[0] == 401
    # a token in the query string (EventSource cannot send headers) is accepted and never logged
    conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=30)
    conn.request("GET", f"/events?token={bob}")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.readline() == b"retry: 400\n"
    conn.close()
    wait_until(lambda: "GET /events 200" in proc.logs(), 10, "the stream's access log line")
    assert bob not in proc.logs() and alice not in proc.logs()


@pytest.mark.host
@pytest.mark.skipif(os.geteuid() != 0, reason="creates a local user")
def test_pam_login_of_a_real_user(api: tuple[Fleet, ApiProc]) -> None:
    fleet, proc = api
    subprocess.run(["groupadd", PAM_GROUP], check=True, capture_output=True)
    try:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", "-G", PAM_GROUP, PAM_USER], check=True,
                       capture_output=True)  # fmt: skip
        subprocess.run(["chpasswd"], input=f"{PAM_USER}:{PAM_PASSWORD}\n", text=True, check=True)
        got = login(proc.port, PAM_USER, PAM_PASSWORD, "pam")
        assert got["eauth"] == "pam" and got["perms"] == ["test.echo", {"m1": ["test.ping"]}]
        assert _post(proc, got["token"], [{"client": "local", "tgt": "m1", "fun": "test.ping"}])[1] == {
            "return": [{"m1": True}]
        }
        assert _post(proc, got["token"], [{"client": "local", "tgt": "m1", "fun": "test.echo", "arg": ["g"]}])[1] == {
            "return": [{"m1": "g"}]
        }
        assert _post(proc, got["token"], [{"client": "local", "tgt": "m1", "fun": "test.version"}])[0] == 401
        body = json.dumps({"username": PAM_USER, "password": "wrong", "eauth": "pam"}).encode()
        assert call(proc.port, "POST", "/login", body, {"Content-Type": "application/json"})[0] == 401
        assert PAM_PASSWORD not in proc.logs() and "wrong" not in proc.logs().replace("wrong password", "")
    finally:
        subprocess.run(["userdel", PAM_USER], check=False, capture_output=True)
        subprocess.run(["groupdel", PAM_GROUP], check=False, capture_output=True)


def test_webhook_fires_on_the_bus(api: tuple[Fleet, ApiProc]) -> None:
    fleet, proc = api
    alice = login(proc.port, "alice", "alice-pw")["token"]
    with fleet.listening("salt/netapi/hook/*", "salt/netapi/hook/probe") as events:
        status, _, raw = call(proc.port, "POST", "/hook/deploy/web", json.dumps({"ref": "main"}).encode(),
                              {"X-Auth-Token": alice, "Content-Type": "application/json", "X-Custom": "1"})  # fmt: skip
        assert (status, json.loads(raw)) == (200, {"success": True})
        got = events.get_event(timeout=10)
    assert got is not None and got[0] == "salt/netapi/hook/deploy/web"
    data = got[1]
    assert data["post"] == {"ref": "main"} and json.loads(data["body"]) == {"ref": "main"}
    assert data["headers"]["X-Custom"] == "1" and "X-Auth-Token" not in data["headers"]
    assert alice not in json.dumps(data)


def test_static_and_app_stay_inside_their_folder(api: tuple[Fleet, ApiProc]) -> None:
    fleet, proc = api
    status, _, raw = call(proc.port, "GET", "/static/js/app.js")
    assert (status, raw) == (200, b"console.log('ui')\n")
    assert call(proc.port, "GET", "/app")[2] == call(proc.port, "GET", "/app/some/route")[2] == b"<html>the ui</html>\n"
    for path in ("/static/../htpasswd", "/static/%2e%2e/htpasswd", "/static/js/%2e%2e/%2e%2e/htpasswd",
                 "/static/..%2fhtpasswd", "/static/leak"):  # fmt: skip
        status, _, raw = call(proc.port, "GET", path)
        assert status in (403, 404) and b"alice-pw" not in raw, (path, status)


def test_events_stream_misses_nothing_in_a_burst(api: tuple[Fleet, ApiProc]) -> None:
    from briny.common.config import load_master_config
    from briny.common.event import EventSender

    fleet, proc = api
    alice = login(proc.port, "alice", "alice-pw")["token"]
    stream = _stream(proc, alice)
    count = 3000
    sender = EventSender(load_master_config(str(fleet.master_conf)), "master")
    try:
        for i in range(count):
            sender.fire(f"burst/api/{i}", {"i": i})
        seen = _events_until(stream, f"burst/api/{count - 1}")
    finally:
        sender.close()
        stream.close()
    numbers = [data["i"] for tag, data in seen if tag.startswith("burst/api/")]
    assert numbers == list(range(count)), "events lost or out of order"
    assert not [t for t, _ in seen if t == "salt/event/dropped"]
