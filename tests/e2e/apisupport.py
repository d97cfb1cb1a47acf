"""A briny-api process beside a :class:`~tests.e2e.support.Fleet`, and a plain HTTP client for it.

:func:`api_fleet` writes the master config of ``tests/apicases.py`` (``external_auth: file``,
``netapi_enable_clients``, ``rest_cherrypy`` on a free port of 127.0.0.1, no TLS), starts the
fleet, then ``briny-api`` (waiting until ``GET /`` answers); :meth:`ApiProc.close` stops it by
pid. :func:`call` sends one request and returns (status, headers, body bytes).
"""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from briny.common.transport import free_ports
from tests import apicases
from tests.waiting import wait_until

from .support import Fleet, script


@dataclass
class ApiProc:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def logs(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def call(port: int, method: str, path: str, data: bytes | None = None, headers: dict[str, str] | None = None,
         timeout: float = 60.0) -> tuple[int, dict[str, str], bytes]:  # fmt: skip
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - http://127.0.0.1 built here
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def login(port: int, user: str, password: str, eauth: str = "file") -> dict[str, Any]:
    body = json.dumps({"username": user, "password": password, "eauth": eauth}).encode()
    status, _, raw = call(
        port, "POST", "/login", body, {"Content-Type": "application/json", "Accept": "application/json"}
    )
    assert status == 200, raw
    out: dict[str, Any] = json.loads(raw)["return"][0]
    return out


def api_fleet(root: Path, ids: tuple[str, ...] = ("m1",), api_opts: dict[str, Any] | None = None,
              external_auth: dict[str, Any] | None = None) -> tuple[Fleet, int]:  # fmt: skip
    """A started fleet whose master config serves the API on a free port (briny-api not started)."""
    (port,) = free_ports(1)
    htpasswd = Path(root) / "htpasswd"
    Path(root).mkdir(parents=True, exist_ok=True)
    htpasswd.write_text("".join(f"{u}:{pw}\n" for u, pw in apicases.USERS.items()))
    eauth = external_auth or {
        "file": {"^filename": str(htpasswd), "^filetype": "text", "^hashtype": "plaintext", **apicases.ACL}
    }
    fleet = Fleet(
        root,
        ids,
        auto_accept=True,
        master_opts={
            "rest_cherrypy": {
                "host": "127.0.0.1",
                "port": port,
                "disable_ssl": True,
                "max_request_body_size": 1048576,
                **(api_opts or {}),
            },
            "netapi_enable_clients": apicases.ENABLED_CLIENTS,
            "external_auth": eauth,
        },  # fmt: skip
    )
    fleet.start()
    return fleet, port


def start_api(fleet: Fleet, port: int) -> ApiProc:
    log = fleet.master_dir / "api.console"
    with open(log, "ab") as console:
        proc = subprocess.Popen([*script("briny-api"), "-c", str(fleet.master_conf), "-l", "info"],
                                stdin=subprocess.DEVNULL, stdout=console, stderr=console)  # fmt: skip
    api = ApiProc(proc, port, log)

    def up() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"briny-api exited with {proc.returncode}:\n{api.logs()}")
        try:
            return call(port, "GET", "/", timeout=2)[0] == 200
        except OSError:
            return False

    wait_until(up, 30, "briny-api to serve", interval=0.1, detail=api.logs)
    return api
