"""``briny-master -d`` as a real process: serve a raw minion, run ``briny``, stop cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from briny.common.config import load_master_config
from briny.common.transport import ZmqClient, free_ports
from briny.master.clientapi import MasterClient
from briny.master.jobcache.sqlite import SqliteJobCache

from tests.waiting import wait_until

from .test_server import RawMinion, join_publishes, rsa_key

BIN = Path(sys.executable).parent


@pytest.fixture
def root():
    root = Path(tempfile.mkdtemp(prefix="bd", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


async def _probe(api: MasterClient) -> str:
    """A probe job for m1 (through the master's IPC, from a worker thread: the client blocks)."""
    pub = await asyncio.get_running_loop().run_in_executor(None, api.publish, "m1", "test.ping")
    return str(pub["jid"])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_daemon_serves_a_job_and_stops_cleanly(root):
    ret_port, pub_port = free_ports(2)
    conf = root / "conf"
    conf.mkdir()
    (conf / "master").write_text(
        f"root_dir: {root}\ninterface: 127.0.0.1\nret_port: {ret_port}\npublish_port: {pub_port}\n"
        "auto_accept: true\npki_dir: pki\ncachedir: cache\nsock_dir: s\nlog_file: master.log\n"
        "pidfile: master.pid\nlog_level: info\ntimeout: 3\ngather_job_timeout: 1\n"
    )
    started = subprocess.run(
        [str(BIN / "briny-master"), "-c", str(conf), "-d"], capture_output=True, text=True, timeout=30
    )
    assert started.returncode == 0, started.stderr
    pid = int((root / "master.pid").read_text())
    jids: list[str] = []
    try:

        async def scenario() -> None:
            client = ZmqClient("127.0.0.1", ret_port, pub_port)
            try:
                m = RawMinion(client, "m1", rsa_key(0))
                assert (await m.auth())["status"] == "accepted"
                await m.req("grains", grains={"os": "Debian"})
                with MasterClient(load_master_config(conf)) as api:
                    await join_publishes(m, lambda: _probe(api))
                cli = await asyncio.create_subprocess_exec(
                    str(BIN / "briny"),
                    "-c",
                    str(conf),
                    "-G",
                    "os:Debian",
                    "test.ping",
                    "--out",
                    "json",
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                pub = await m.next_pub(10)
                assert pub is not None and pub["fun"] == "test.ping"
                await m.req(
                    "ret", jid=pub["jid"], fun="test.ping", fun_args=[], retcode=0, success=True, **{"return": True}
                )
                out, err = await asyncio.wait_for(cli.communicate(), 20)
                assert cli.returncode == 0, err.decode()
                assert out.decode().split() == ["{", '"m1":', "true", "}"]
                # a return in flight when SIGTERM arrives is still stored
                cli = await asyncio.create_subprocess_exec(
                    str(BIN / "briny"),
                    "-c",
                    str(conf),
                    "--async",
                    "m1",
                    "test.ping",
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                await asyncio.wait_for(cli.communicate(), 20)
                pub = await m.next_pub(10)
                assert pub is not None
                late = pub["jid"]
                jids.append(late)
                frame = m.frame("ret", jid=late, fun="test.ping", fun_args=[], **{"return": "late"})
                await client.dealer.send_multipart([b"\0" * 8, frame])
                os.kill(pid, signal.SIGTERM)
            finally:
                client.close()

        asyncio.run(asyncio.wait_for(scenario(), 60))
        wait_until(lambda: not _pid_alive(pid), 15, "the master to stop on SIGTERM", interval=0.05)
        assert not (root / "master.pid").exists()
        assert not (root / "s" / "master_client.ipc").exists()
        cache = SqliteJobCache(str(root / "cache" / "jobs.sqlite"), readonly=True)
        try:
            assert cache.get_returns(jids[0])["m1"]["return"] == "late"
        finally:
            cache.close()
        log = (root / "master.log").read_text()
        assert "shutting down" in log
    finally:
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_refuses_a_second_master_and_a_taken_port(root):
    ret_port, pub_port = free_ports(2)
    conf = root / "conf"
    conf.mkdir()
    (conf / "master").write_text(
        f"root_dir: {root}\ninterface: 127.0.0.1\nret_port: {ret_port}\n"
        f"publish_port: {pub_port}\nsock_dir: s\npidfile: master.pid\n"
    )
    (root / "master.pid").write_text(f"{os.getpid()}\n")  # "running": this test process
    res = subprocess.run([str(BIN / "briny-master"), "-c", str(conf)], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and "already running" in res.stderr
    (root / "master.pid").unlink()
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", ret_port))
    taken.listen()
    try:
        res = subprocess.run(
            [str(BIN / "briny-master"), "-c", str(conf), "-d"], capture_output=True, text=True, timeout=30
        )
        assert res.returncode == 2 and f"cannot bind ret_port 127.0.0.1:{ret_port}" in res.stderr
    finally:
        taken.close()
    res = subprocess.run(
        [str(BIN / "briny-master"), "-c", str(root / "nope")], capture_output=True, text=True, timeout=30
    )
    assert res.returncode == 2 and "does not exist" in res.stderr
