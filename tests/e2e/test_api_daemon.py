"""The briny-api process: systemd readiness, -d, TLS from ssl_crt / ssl_key, and its start-up
refusals (exit 2 with the reason; a taken port after -d: exit 1), beside a real master."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from briny.common.transport import free_ports
from tests.waiting import wait_until

from .apisupport import api_fleet
from .support import Fleet, pid_alive, script

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    made, _ = api_fleet(tmp_path_factory.mktemp("apid"))
    try:
        yield made
    finally:
        made.close()


def conf(fleet: Fleet, name: str, **section: Any) -> tuple[Path, int]:
    """A config folder for one more briny-api of this master: its own port, log and pidfile."""
    (port,) = free_ports(1)
    folder = fleet.root / name
    folder.mkdir(exist_ok=True)
    opts = yaml.safe_load((fleet.master_conf / "master").read_text())
    opts["rest_cherrypy"] = {"host": "127.0.0.1", "port": port, "disable_ssl": True, **section}
    opts["api_logfile"] = str(folder / "api.log")
    opts["api_pidfile"] = str(folder / "api.pid")
    opts = {k: v for k, v in opts.items() if v is not None}
    (folder / "master").write_text(yaml.safe_dump(opts))
    return folder, port


def briny_api(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([*script("briny-api"), "-c", str(folder), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})  # fmt: skip


def test_readiness_and_stop_under_systemd(fleet: Fleet) -> None:
    folder, port = conf(fleet, "sd")
    with tempfile.TemporaryDirectory(prefix="sdn", dir="/tmp") as tmp:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(f"{tmp}/n")
        sock.settimeout(30)
        proc = briny_api(folder, env={"NOTIFY_SOCKET": f"{tmp}/n"})
        try:
            first = sock.recv(4096).decode().splitlines()
            assert "READY=1" in first, first
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as resp:
                assert json.loads(resp.read())["return"] == "Welcome"
            proc.send_signal(signal.SIGTERM)
            assert "STOPPING=1" in sock.recv(4096).decode().splitlines()
            assert proc.wait(15) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
            sock.close()
    assert "briny-api serving on http://127.0.0.1" in (folder / "api.log").read_text()


def test_daemonizes_and_refuses_a_bad_start(fleet: Fleet) -> None:
    folder, port = conf(fleet, "d")
    proc = briny_api(folder, "-d")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    pid = int((folder / "api.pid").read_text())
    try:
        wait_until(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).status == 200, 20,
                   "the daemonized briny-api to serve")  # fmt: skip
        again = briny_api(folder)  # the same pidfile: refused
        _, err = again.communicate(timeout=30)
        assert again.returncode == 2 and f"already running with pid {pid}" in err
        taken, _ = conf(fleet, "taken")
        cfg = yaml.safe_load((taken / "master").read_text())
        cfg["rest_cherrypy"]["port"] = port
        (taken / "master").write_text(yaml.safe_dump(cfg))
        clash = briny_api(taken, "-d")
        _, err = clash.communicate(timeout=30)
        assert clash.returncode == 1 and "address already in use" in err.lower(), err
    finally:
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not pid_alive(pid), 15, "the daemonized briny-api to stop")
    assert not (folder / "api.pid").exists()
    for name, section, message in (
        ("noport", {"port": None}, "has no 'port'"),
        ("nossl", {"disable_ssl": None}, "neither 'ssl_crt' and 'ssl_key' nor 'disable_ssl: True'"),
        ("badcert", {"disable_ssl": False, "ssl_crt": "/nonexistent.crt", "ssl_key": "/nonexistent.key"},
         "cannot load ssl_crt /nonexistent.crt"),
    ):  # fmt: skip
        bad, _ = conf(fleet, name)
        cfg = yaml.safe_load((bad / "master").read_text())
        cfg["rest_cherrypy"] = {k: v for k, v in {**cfg["rest_cherrypy"], **section}.items() if v is not None}
        (bad / "master").write_text(yaml.safe_dump(cfg))
        res = briny_api(bad)
        _, err = res.communicate(timeout=30)
        assert res.returncode == 2 and message in err, (name, err)


def _certificate(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    crt, pem = folder / "api.crt", folder / "api.key"
    crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))  # fmt: skip
    pem.chmod(0o600)
    return crt, pem


def test_tls_from_ssl_crt_and_ssl_key(fleet: Fleet) -> None:
    folder, port = conf(fleet, "tls")
    crt, key = _certificate(folder)
    cfg = yaml.safe_load((folder / "master").read_text())
    cfg["rest_cherrypy"] = {"host": "127.0.0.1", "port": port, "ssl_crt": str(crt), "ssl_key": str(key)}
    (folder / "master").write_text(yaml.safe_dump(cfg))
    proc = briny_api(folder)
    try:
        ctx = ssl.create_default_context(cafile=str(crt))

        def up() -> bool:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{port}/", timeout=5, context=ctx) as resp:
                    return bool(json.loads(resp.read())["return"] == "Welcome")
            except OSError:
                return False

        wait_until(up, 30, "briny-api to serve over TLS", interval=0.1)
        with pytest.raises(OSError):  # plain HTTP on the TLS port is not served
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)
    assert proc.returncode == 0


def test_webhook_without_auth_and_no_enabled_client(fleet: Fleet) -> None:
    folder, port = conf(fleet, "hooks", webhook_disable_auth=True, webhook_url="/in", thread_pool=1)
    cfg = yaml.safe_load((folder / "master").read_text())
    cfg.pop("netapi_enable_clients")  # Salt 3006+: no client at all unless listed
    (folder / "master").write_text(yaml.safe_dump(cfg))
    proc = briny_api(folder)
    try:
        wait_until(lambda: _status(port, "GET", "/") == 200, 30, "briny-api to serve", interval=0.1)
        with fleet.listening("salt/netapi/hook/*", "salt/netapi/hook/probe") as events:
            assert _status(port, "POST", "/in/ci/done", b'{"ok": true}') == 200  # no token needed
            got = events.get_event(timeout=10)
        assert got is not None and got[0] == "salt/netapi/hook/ci/done" and got[1]["post"] == {"ok": True}
        assert _status(port, "POST", "/hook/ci/done", b"{}") == 404  # only webhook_url is a hook
        body = json.dumps({"username": "alice", "password": "alice-pw", "eauth": "file"}).encode()
        token = json.loads(_call(port, "POST", "/login", body)[1])["return"][0]["token"]
        status, raw = _call(port, "POST", "/", b'[{"client": "local", "tgt": "m1", "fun": "test.ping"}]', token)
        assert status == 400 and b"Client disabled: 'local'" in raw
        # thread_pool: 1 allows one /events stream; a second is refused while the first is open
        import http.client

        first = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        first.request("GET", "/events", headers={"X-Auth-Token": token})
        resp = first.getresponse()
        assert resp.status == 200 and resp.readline() == b"retry: 400\n"
        assert _call(port, "GET", "/events", None, token)[0] == 503
        stats = json.loads(_call(port, "GET", "/stats", None, token)[1])["briny-api"]
        assert stats["Event Streams"] == 1 and stats["Thread Pool"] == 1
        first.close()
        wait_until(lambda: json.loads(_call(port, "GET", "/stats", None, token)[1])["briny-api"]["Event Streams"] == 0,
                   10, "the closed stream to end")  # fmt: skip
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)


def _call(port: int, method: str, path: str, data: bytes | None = None, token: str = "") -> tuple[int, bytes]:
    from .apisupport import call

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["X-Auth-Token"] = token
    try:
        status, _, raw = call(port, method, path, data, headers, timeout=30)
    except OSError:
        return 0, b""
    return status, raw


def _status(port: int, method: str, path: str, data: bytes | None = None) -> int:
    return _call(port, method, path, data)[0]
