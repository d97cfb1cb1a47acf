#!/usr/bin/env python3
"""Record what Salt's salt-api (rest_cherrypy) answers to tests/apicases.py, as tests/golden/api/cases.json.

usage: dev/api_golden.py [--salt /tmp/saltref/bin]

Starts the reference salt-master, salt-minion (id m1) and salt-api on 127.0.0.1 (free ports,
a private folder under /tmp), logs alice and bob in, sends every case and writes, per case,
the status, a few headers and the masked body (JSON when it parses, else the text). Stops
what it started by pid. The suite compares briny-api with the file, with no Salt installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import apicases

OUT = Path(__file__).resolve().parent.parent / "tests" / "golden" / "api" / "cases.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def send(port: int, case: dict, tokens: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    data, headers = apicases.request_parts(case, tokens)
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{case['path']}", data=data, headers=headers, method=case["method"]
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - http://127.0.0.1 built here
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def record(status: int, headers: dict[str, str], raw: bytes, case: dict) -> dict:
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
        kind = "json"
    except ValueError:
        try:
            body = yaml.safe_load(text) if case.get("accept") == "application/x-yaml" else None
            kind = "yaml" if body is not None else "text"
        except yaml.YAMLError:
            body, kind = None, "text"
        if kind == "text":
            body = apicases.html_error(text)
    if case["name"].startswith("minions_"):
        body = apicases.mask_grains(body)
    kept = {k: v.split(";")[0] for k, v in headers.items() if k in apicases.KEPT_HEADERS}
    kept["names"] = sorted(k for k in headers if k not in ("Date", "Content-Length", "Server"))
    kept["Set-Cookie"] = "session_id" if "session_id=" in headers.get("Set-Cookie", "") else ""
    return {"status": status, "headers": kept, "kind": kind, "body": apicases.mask(body)}


class Reference:
    """The reference salt-master, salt-minion (m1) and salt-api under a private folder of /tmp."""

    def __init__(self, salt: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sapi", dir="/tmp"))
        self.salt = salt
        self.pub, self.ret, self.port = free_port(), free_port(), free_port()
        self.conf = self.root / "conf"
        self.procs: list[subprocess.Popen[bytes]] = []
        (self.root / "htpasswd").write_text("".join(f"{u}:{pw}\n" for u, pw in apicases.USERS.items()))
        master = {
            "root_dir": str(self.root / "m"), "user": "root", "interface": "127.0.0.1", "publish_port": self.pub,
            "ret_port": self.ret, "auto_accept": True, "log_level": "info", "timeout": 5,
            "rest_cherrypy": {"host": "127.0.0.1", "port": self.port, "disable_ssl": True,
                              "max_request_body_size": 1048576},
            "netapi_enable_clients": apicases.ENABLED_CLIENTS,
            "external_auth": {"file": {"^filename": str(self.root / "htpasswd"), "^filetype": "text",
                                       "^hashtype": "plaintext", **apicases.ACL}},
        }  # fmt: skip
        minion = {"root_dir": str(self.root / "n"), "user": "root", "id": "m1", "master": "127.0.0.1",
                  "master_port": self.ret, "publish_port": self.pub, "log_level": "info"}  # fmt: skip
        self.conf.mkdir()
        (self.conf / "master").write_text(yaml.safe_dump(master))
        (self.conf / "minion").write_text(yaml.safe_dump(minion))

    def start(self, timeout: float = 120) -> dict[str, str]:
        """Start the three daemons; the tokens of alice and bob once m1 answers through the API."""
        for cmd in ("salt-master", "salt-minion", "salt-api"):
            with open(self.root / f"{cmd}.out", "wb") as log:
                self.procs.append(subprocess.Popen([f"{self.salt}/{cmd}", "-c", str(self.conf), "-l", "info"],
                                                   stdout=log, stderr=log))  # fmt: skip
        deadline = time.monotonic() + timeout
        tokens: dict[str, str] = {}
        while time.monotonic() < deadline:
            try:
                for user, pw in apicases.USERS.items():
                    case = {"method": "POST", "path": "/login", "name": "login",
                            "body": {"username": user, "password": pw, "eauth": "file"}}  # fmt: skip
                    tokens[user] = json.loads(send(self.port, case, {})[2])["return"][0]["token"]
                case = {"method": "POST", "path": "/", "name": "x", "auth": "alice",
                        "body": [{"client": "local", "tgt": "m1", "fun": "test.ping"}]}  # fmt: skip
                st, _, raw = send(self.port, case, tokens)
                if st == 200 and json.loads(raw)["return"][0].get("m1") is True:
                    return tokens
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(1)  # polling a stack that starts in its own time
        raise RuntimeError(f"the reference stack did not come up; see {self.root}")

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if not os.environ.get("KEEP"):
            shutil.rmtree(self.root, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--salt", default="/tmp/saltref/bin")  # noqa: S108 - where dev installs the reference
    ns = p.parse_args()
    ref = Reference(ns.salt)
    try:
        tokens = ref.start()
        out = {}
        for case in apicases.CASES:
            out[case["name"]] = record(*send(ref.port, case, tokens), case)
            print(case["name"], out[case["name"]]["status"])
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    finally:
        ref.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
