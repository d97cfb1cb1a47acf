"""The daemons under a ``Type=notify`` unit: READY=1 on readiness and STOPPING=1 on shutdown, sent to
the NOTIFY_SOCKET systemd gives them (here a unix datagram socket the test binds), and the jobs they
run never see that socket."""

from __future__ import annotations

import signal
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

WAIT = 30.0


@pytest.fixture
def notify_dir() -> Iterator[Path]:
    # unix socket paths are short (108 bytes): a folder of our own under /tmp, not tmp_path
    with tempfile.TemporaryDirectory(prefix="sdn", dir="/tmp") as tmp:
        yield Path(tmp)


def bind(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(WAIT)
    return sock


def receive(sock: socket.socket, wanted: str) -> dict[str, str]:
    """The first datagram holding ``wanted`` (waits on the socket up to WAIT seconds), as a dict."""
    while True:
        try:
            data = sock.recv(4096).decode()
        except TimeoutError:
            raise AssertionError(f"no {wanted} within {WAIT} s") from None
        fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
        if wanted in data.splitlines():
            return fields


def test_master_and_minion_tell_systemd_when_they_are_ready_and_stopping(make_fleet, notify_dir):
    fleet = make_fleet(["m1"], auto_accept=False)
    with bind(notify_dir / "master") as master_sock, bind(notify_dir / "minion") as minion_sock:
        fleet.master.env["NOTIFY_SOCKET"] = str(notify_dir / "master")
        fleet.minions["m1"].env["NOTIFY_SOCKET"] = str(notify_dir / "minion")
        fleet._spawn(fleet.master, "briny-master")
        ready = receive(master_sock, "READY=1")
        assert f"ret {fleet.ret_port}" in ready["STATUS"], ready
        # ready means serving: the operator IPC answers at once, and a minion can authenticate
        assert fleet.key("-L", "--out", "json").returncode == 0
        fleet.start_minion("m1")
        # the key is not accepted yet: the minion is up (pending, asking again), so it is ready
        assert receive(minion_sock, "READY=1")["STATUS"].startswith("pending"), fleet.logs()
        assert fleet.key("-a", "m1", "-y").returncode == 0
        fleet.wait_connected(["m1"], WAIT)
        # a job's commands never inherit the unit's notify socket
        res = fleet.briny("m1", "cmd.run", "echo ${NOTIFY_SOCKET:-unset}", "--out", "json")
        assert res.json() == {"m1": "unset"}, res.stderr
        assert fleet.stop(fleet.minions["m1"], signal.SIGTERM) == 0
        receive(minion_sock, "STOPPING=1")
        assert fleet.stop_master(signal.SIGTERM) == 0
        receive(master_sock, "STOPPING=1")


def test_an_abstract_notify_socket_is_reached_too(make_fleet):
    """systemd may hand over ``@name`` (the abstract namespace)."""
    name = f"briny-sdnotify-test-{id(make_fleet)}"
    fleet = make_fleet(["m1"], auto_accept=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(WAIT)
        fleet.master.env["NOTIFY_SOCKET"] = "@" + name
        fleet._spawn(fleet.master, "briny-master")
        receive(sock, "READY=1")
